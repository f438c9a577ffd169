// The generated part of docs/ops.md: every registered aten schema, grouped by the file that
// defines it, with its backends (read from the dispatch table) and, for ops the op table covers,
// their dtypes and derivative status.
#include <algorithm>
#include <map>
#include <set>

#include "anatomy/dispatch/operator_entry.h"
#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

using dispatch::RegKey;

// Sections in reading order: the defining file and its title.
struct Section {
  const char* file;
  const char* title;
};
constexpr Section kSections[] = {
    {"factories.cpp", "Factories"},
    {"views.cpp", "Views"},
    {"copy.cpp", "Copies, fills and conversions"},
    {"binary.cpp", "Element-wise binary and ternary"},
    {"unary.cpp", "Element-wise unary"},
    {"reduce.cpp", "Reductions"},
    {"reduce_out.cpp", "Reductions into a given tensor (out=)"},
    {"statistics.cpp", "Statistics"},
    {"counting.cpp", "Counting"},
    {"nn.cpp", "Neural-network functions"},
    {"channel_norm.cpp", "Batch and group normalization"},
    {"attention.cpp", "Dropout and attention"},
    {"convolution.cpp", "Convolutions"},
    {"linalg.cpp", "Matrix products"},
    {"einsum.cpp", "Einstein summation"},
    {"indexing.cpp", "Joining, indexing, scattering and masking"},
    {"index_by_dim.cpp", "By index along one dim"},
    {"shape.cpp", "Reordering, padding, sorting and scans"},
    {"pad.cpp", "Padding by mode"},
    {"nn_backward.cpp", "Backward functions of the neural-network operators"},
    {"loss.cpp", "Losses"},
    {"pooling.cpp", "Pooling and upsampling"},
    {"cross_entropy_rows.cpp", "cross_entropy's fused operators"},
    {"bucketize.cpp", "Searching sorted sequences"},
    {"fused_optim.cpp", "Optimizer steps"},
};

std::string file_of(const std::string& where) { return where.substr(0, where.find(':')); }

// "kernel" (a backend kernel), "composite" (written with other operators), or "-".
std::string backend_cell(const dispatch::OperatorEntry& e, RegKey backend) {
  if (e.registered(backend)) return "kernel";
  if (e.registered(RegKey::CompositeExplicitAutograd) || e.registered(RegKey::CompositeImplicitAutograd)) {
    return "composite";
  }
  return "-";
}

std::string dtypes_cell(const std::set<DType>& dtypes) {
  if (dtypes.empty()) return "";
  const std::set<DType> floating = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  const std::set<DType> integral = {DType::UInt8, DType::Int8, DType::Int32, DType::Int64};
  std::set<DType> all = floating;
  all.insert(integral.begin(), integral.end());
  if (dtypes == all) return "all but bool";
  all.insert(DType::Bool);
  if (dtypes == all) return "all";
  std::vector<std::string> parts;
  std::set<DType> rest = dtypes;
  auto take = [&](const std::set<DType>& group, const char* label) {
    if (std::includes(rest.begin(), rest.end(), group.begin(), group.end())) {
      parts.push_back(label);
      for (DType t : group) rest.erase(t);
    }
  };
  take(floating, "floating");
  take(integral, "integral");
  for (DType t : rest) parts.emplace_back(name(t));
  return fmt::format("{}", fmt::join(parts, ", "));
}

struct Coverage {
  std::set<DType> dtypes;
  bool differentiable = false;
  bool covered = false;
};

std::string derivative_cell(const dispatch::OperatorEntry& e, const Coverage& c) {
  if (!c.covered) return "";
  if (!c.differentiable) return "no";
  // An out= form (a written argument after the first) refuses to record, as in PyTorch
  // (autograd/out_forms.cpp).
  const auto& args = e.schema().arguments;
  const bool out_form = std::any_of(args.begin() + std::min<size_t>(1, args.size()), args.end(),
                                    [](const dispatch::Argument& a) { return a.alias && a.alias->is_write; });
  if (out_form) return e.registered(RegKey::Autograd) ? "no (out= raises if an input requires grad)" : "missing";
  if (e.registered(RegKey::Autograd) || e.registered(RegKey::AutogradCPU)) return "yes";
  // A CompositeImplicitAutograd op differentiates through the ops it calls: it has a derivative
  // exactly when they have.
  if (e.registered(RegKey::CompositeImplicitAutograd)) return "through its parts";
  return "missing";
}

}  // namespace

std::string render_ops_markdown() {
  std::map<std::string, Coverage> coverage;  // by schema full name
  for (const OpInfo& info : op_table()) {
    for (const std::string& s : info.schemas) {
      Coverage& c = coverage[s];
      c.covered = true;
      c.differentiable = c.differentiable || info.differentiable;
      c.dtypes.insert(info.dtypes.begin(), info.dtypes.end());
    }
  }
  std::map<std::string, std::vector<const dispatch::OperatorEntry*>> by_file;
  auto& d = dispatch::Dispatcher::singleton();
  for (const std::string& op : d.list_ops()) {
    if (op.rfind("aten::", 0) != 0) continue;
    const dispatch::OperatorEntry& e = d.find_or_throw(op).entry();
    if (!e.has_schema()) continue;
    by_file[file_of(e.defined_at())].push_back(&e);
  }
  std::string out;
  auto emit = [&](const std::string& title, std::vector<const dispatch::OperatorEntry*> entries) {
    // Registration order is file order; sort by name so the listing is stable.
    std::stable_sort(entries.begin(), entries.end(),
                     [](auto* a, auto* b) { return a->schema().full_name() < b->schema().full_name(); });
    out += fmt::format(
        "### {}\n\n| schema | CPU | CUDA | Meta | dtypes (op table) | derivative |\n"
        "| --- | --- | --- | --- | --- | --- |\n",
        title);
    for (const dispatch::OperatorEntry* e : entries) {
      const std::string full = e->schema().full_name();
      Coverage c;
      if (auto it = coverage.find(full); it != coverage.end()) c = it->second;
      out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", e->schema().to_string(), backend_cell(*e, RegKey::CPU),
                         backend_cell(*e, RegKey::CUDA), backend_cell(*e, RegKey::Meta), dtypes_cell(c.dtypes),
                         derivative_cell(*e, c));
    }
    out += "\n";
  };
  for (const Section& s : kSections) {
    auto it = by_file.find(s.file);
    if (it == by_file.end()) continue;
    emit(s.title, it->second);
    by_file.erase(it);
  }
  for (auto& [file, entries] : by_file) emit(file, entries);
  return out;
}

}  // namespace anatomy::testing
