// The op-table driver: every entry of testing/op_table.h, for every dtype it accepts and every
// sample, is run and compared with its fp64 reference; its in-place and out= forms too; and
// its bad inputs must throw the documented error and leave every tensor unchanged. Every sample
// also runs on Meta (its tensors moved there with the same sizes, strides and offsets), where
// the results must have the CPU results' dtypes, shapes and strides; an entry whose result shape
// depends on the values raises NotImplementedError there instead (kMetaDataDependent).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "anatomy/backend.h"
#include "anatomy/testing/op_table.h"

using namespace anatomy;
using namespace anatomy::testing;

namespace {

std::string short_description(const Tensor& t) {
  if (!t.defined()) return "None";
  return fmt::format("{}[{}] strides [{}] offset {}{}", name(t.dtype()), fmt::join(t.sizes(), ", "),
                     fmt::join(t.strides(), ", "), t.storage_offset(),
                     t.impl()->is_wrapped_number() ? " (wrapped)" : "");
}

std::string describe_sample(const SampleInput& s) {
  std::string out = s.label + ":";
  for (const Tensor& t : s.tensors) out += fmt::format(" {}", short_description(t));
  if (!s.dims.empty()) out += fmt::format(" dims=[{}]", fmt::join(s.dims, ","));
  if (!s.ints.empty()) out += fmt::format(" ints=[{}]", fmt::join(s.ints, ","));
  if (!s.scalars.empty()) out += fmt::format(" scalars=[{}]", fmt::join(s.scalars, ","));
  if (s.keepdim) out += " keepdim";
  return out;
}

// A copy of a sample whose tensors are fresh clones with the same layout (so an in-place call
// cannot disturb the next one); the clone keeps strides by restriding a dense copy.
SampleInput clone_sample(const SampleInput& s) {
  SampleInput c = s;
  for (Tensor& t : c.tensors) {
    if (!t.defined()) continue;
    bool wrapped = t.impl()->is_wrapped_number();
    Tensor copy = empty_strided(t.sizes(), t.strides(), t.options());
    // A broadcast (stride-0) layout cannot be written through; keep it dense.
    if (copy.numel() > 0 && !t.is_non_overlapping_and_dense()) copy = empty(t.sizes(), t.options());
    copy.copy_(t);
    copy.impl()->set_wrapped_number(wrapped);
    t = copy;
  }
  return c;
}

// The samples whose results' shapes (or a value the op returns on the host) come from the input
// values: on Meta, which has no values, they raise NotImplementedError. Every other sample of
// every entry, a new entry's included, must run on Meta.
struct DataDependent {
  std::string why;
  std::function<bool(const SampleInput&)> applies;  // which samples; every one when empty
};
// Whether tensors[1] up to (not including) tensors[end] holds a bool mask.
bool has_bool_index(const SampleInput& s, size_t end) {
  for (size_t i = 1; i < end; ++i) {
    if (s.tensors[i].defined() && s.tensors[i].dtype() == DType::Bool) return true;
  }
  return false;
}
const std::map<std::string, DataDependent> kMetaDataDependent = {
    {"unique", {"the number of distinct values is the result's size", {}}},
    {"nonzero", {"the number of nonzero elements is the result's size", {}}},
    {"masked_select", {"the number of true mask elements is the result's size", {}}},
    {"bincount", {"the largest value decides the result's size (minlength is only a lower bound)", {}}},
    {"allclose", {"returns a host bool, read from the comparison's values", {}}},
    {"equal",
     {"returns a host bool, read from the values when the shapes match (it is false, values unread, when not)",
      [](const SampleInput& s) { return s.tensors[0].sizes() == s.tensors[1].sizes(); }}},
    // tensors = {self, indices...} and {self, indices..., values}.
    {"index",
     {"a bool mask index selects as many elements as it has true values",
      [](const SampleInput& s) { return has_bool_index(s, s.tensors.size()); }}},
    {"index_put",
     {"a bool mask index selects as many elements as it has true values",
      [](const SampleInput& s) { return has_bool_index(s, s.tensors.size() - 1); }}},
    {"one_hot",
     {"num_classes=-1 takes the largest value plus one",
      [](const SampleInput& s) { return !s.ints.empty() && s.ints[0] == -1; }}},
    {"repeat_interleave",
     {"tensor repeats without output_size: their sum is the result's size",
      [](const SampleInput& s) { return s.tensors.size() > 1 && s.tensors[1].defined() && s.scalars.empty(); }}},
    {"repeat_interleave (indices)",
     {"without output_size the repeats' sum is the result's size",
      [](const SampleInput& s) { return s.scalars.empty(); }}},
};
bool meta_data_dependent(const OpInfo& info, const SampleInput& s, std::string& why) {
  const auto it = kMetaDataDependent.find(info.name);
  if (it == kMetaDataDependent.end() || (it->second.applies && !it->second.applies(s))) return false;
  why = it->second.why;
  return true;
}

// The tally of the Meta pass over one family, printed by its test case.
struct MetaTally {
  std::set<std::string> ran, refused;
  int64_t samples = 0;
};
MetaTally& meta_tally() {
  static MetaTally tally;
  return tally;
}

// `t` on Meta with the same sizes, strides (stride 0 included) and storage offset; a wrapped
// scalar stays on the CPU, as a Python number would.
Tensor to_meta_same_layout(const Tensor& t) {
  if (!t.defined() || t.impl()->is_wrapped_number()) return t;
  const int64_t reach = required_storage_elements(t.sizes(), t.strides(), "to_meta_same_layout");
  const Tensor storage = empty({reach + t.storage_offset()}, TensorOptions().dtype(t.dtype()).device(kMeta));
  return storage.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

// Strides compared where they mean something: a dim of size 0 or 1 has no step to compare.
std::string layout_difference(const Tensor& meta, const Tensor& cpu) {
  if (!meta.defined() || !cpu.defined()) {
    return meta.defined() == cpu.defined() ? "" : "one result is undefined, the other is not";
  }
  if (!meta.is_meta()) return fmt::format("on {}, not meta", meta.device().str());
  if (meta.dtype() != cpu.dtype()) return fmt::format("dtype {}, the CPU's {}", name(meta.dtype()), name(cpu.dtype()));
  if (meta.sizes() != cpu.sizes()) {
    return fmt::format("shape [{}], the CPU's [{}]", fmt::join(meta.sizes(), ", "), fmt::join(cpu.sizes(), ", "));
  }
  if (cpu.numel() == 0) return "";
  for (int64_t d = 0; d < cpu.dim(); ++d) {
    if (cpu.sizes()[d] > 1 && meta.strides()[d] != cpu.strides()[d]) {
      return fmt::format("strides [{}], the CPU's [{}]", fmt::join(meta.strides(), ", "),
                         fmt::join(cpu.strides(), ", "));
    }
  }
  return "";
}

// The sample on Meta against the CPU's results `cpu`.
void check_meta(const OpInfo& info, const SampleInput& sample, const std::vector<Tensor>& cpu) {
  SampleInput m = sample;
  for (Tensor& t : m.tensors) t = to_meta_same_layout(t);
  MetaTally& tally = meta_tally();
  ++tally.samples;
  std::string why;
  const bool dependent = meta_data_dependent(info, sample, why);
  std::vector<Tensor> got;
  try {
    got = info.op(m);
  } catch (const NotImplementedError& e) {
    CHECK_MESSAGE(dependent, "Meta: NotImplementedError: ", std::string(e.what()));
    tally.refused.insert(info.name);
    return;
  } catch (const std::exception& e) {
    FAIL_CHECK("Meta threw ", std::string(typeid(e).name()), ": ", std::string(e.what()));
    return;
  }
  CHECK_MESSAGE(!dependent, "Meta ran a sample listed as data-dependent (", why, ")");
  tally.ran.insert(info.name);
  REQUIRE(got.size() == cpu.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string diff = layout_difference(got[i], cpu[i]);
    CHECK_MESSAGE(diff.empty(), "Meta result ", i, ": ", diff);
  }
}

void check_entry(const OpInfo& info) {
  for (DType dtype : info.dtypes) {
    manual_seed(1234);
    for (const SampleInput& sample : info.samples(dtype)) {
      INFO(info.name, " ", name(dtype), " ", describe_sample(sample));
      std::vector<RefTensor> inputs;
      for (const Tensor& t : sample.tensors) inputs.push_back(to_ref(t));
      std::vector<Tensor> got;
      try {
        got = info.op(sample);
      } catch (const std::exception& e) {
        FAIL_CHECK("threw: ", std::string(e.what()));
        continue;
      }
      check_meta(info, sample, got);
      if (info.check) {
        const std::string problem = info.check(got, sample);
        CHECK_MESSAGE(problem.empty(), problem);
        continue;
      }
      const std::vector<RefTensor> want = info.reference(inputs, sample);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        const std::string diff = compare(got[i], want[i], tolerance_for(info, dtype, want[i].dtype));
        CHECK_MESSAGE(diff.empty(), "result ", i, ": ", diff);
      }
      // The inputs are unchanged by the functional form.
      for (size_t i = 0; i < sample.tensors.size(); ++i) {
        if (!sample.tensors[i].defined()) continue;
        const std::string diff = compare(sample.tensors[i], inputs[i], {0, 0});
        CHECK_MESSAGE(diff.empty(), "input ", i, " changed: ", diff);
      }
      const RefTensor& first = want[0];
      const Tolerance tol = tolerance_for(info, dtype, first.dtype);
      if (info.out) {
        Tensor out = empty(first.shape, TensorOptions().dtype(first.dtype));
        SampleInput c = clone_sample(sample);
        try {
          info.out(out, c);
          const std::string diff = compare(out, first, tol);
          CHECK_MESSAGE(diff.empty(), "out=: ", diff);
        } catch (const std::exception& e) {
          FAIL_CHECK("out= threw: ", std::string(e.what()));
        }
      }
      const Tensor& self = sample.tensors.empty() ? Tensor() : sample.tensors[0];
      if (info.inplace && self.defined() && self.dtype() == first.dtype &&
          std::vector<int64_t>(self.sizes().begin(), self.sizes().end()) == first.shape &&
          !self.impl()->is_wrapped_number()) {
        SampleInput c = clone_sample(sample);
        const uint32_t version = c.tensors[0].version();
        try {
          info.inplace(c);
          const std::string diff = compare(c.tensors[0], first, tol);
          CHECK_MESSAGE(diff.empty(), "in-place: ", diff);
          CHECK_MESSAGE(c.tensors[0].version() > version, "in-place: the version counter did not move");
        } catch (const std::exception& e) {
          FAIL_CHECK("in-place threw: ", std::string(e.what()));
        }
      }
    }
  }
  if (info.error_inputs) {
    for (const ErrorInput& bad : info.error_inputs()) {
      INFO(info.name, " bad input ", describe_sample(bad.sample));
      std::vector<RefTensor> before;
      std::vector<uint32_t> versions;
      for (const Tensor& t : bad.sample.tensors) {
        before.push_back(to_ref(t));
        versions.push_back(t.defined() ? t.version() : 0);
      }
      bool threw = false;
      try {
        (void)info.op(bad.sample);
      } catch (const Error& e) {
        threw = true;
        CHECK_MESSAGE(typeid(e) == *bad.error, "threw ", std::string(typeid(e).name()), " (", std::string(e.what()),
                      "), expected ", std::string(bad.error->name()));
        for (const std::string& needle : bad.needles) {
          CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, "message '", std::string(e.what()),
                        "' lacks '", needle, "'");
        }
      }
      CHECK_MESSAGE(threw, "did not throw");
      for (size_t i = 0; i < bad.sample.tensors.size(); ++i) {
        const Tensor& t = bad.sample.tensors[i];
        if (!t.defined()) continue;
        CHECK_MESSAGE(compare(t, before[i], {0, 0}).empty(), "input ", i, " changed");
        CHECK_MESSAGE(t.version() == versions[i], "input ", i, "'s version changed");
      }
    }
  }
}

void check_family(OpFamily family) {
  const auto entries = ops_in(family);
  CHECK_MESSAGE(!entries.empty(), "no entries for family ", family_name(family));
  meta_tally() = {};
  for (const OpInfo* info : entries) check_entry(*info);
  const MetaTally& tally = meta_tally();
  MESSAGE(std::string(family_name(family)), ": ", entries.size(), " entries, ", tally.samples, " samples on Meta; ",
          tally.ran.size(), " entries ran there, ", tally.refused.size(), " refused data-dependent samples (",
          fmt::format("{}", fmt::join(tally.refused, ", ")), ")");
  for (const OpInfo* info : entries) {
    // A listed entry that never refused is listed for nothing (or its samples lost the case).
    if (kMetaDataDependent.count(info->name) == 1) CHECK_MESSAGE(tally.refused.count(info->name) == 1, info->name);
  }
}

// The table rows with their CUDA cell (the third) blanked.
[[maybe_unused]] std::string without_cuda_column(const std::string& markdown) {
  std::istringstream in(markdown);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) == 0) {
      size_t pos = 0;
      for (int bar = 0; bar < 2 && pos != std::string::npos; ++bar) pos = line.find(" | ", pos + 1);
      const size_t next = pos == std::string::npos ? pos : line.find(" | ", pos + 1);
      if (next != std::string::npos) line = line.substr(0, pos + 3) + "?" + line.substr(next);
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("op table: every entry is well formed") {
  for (const OpInfo& info : op_table()) {
    INFO(info.name);
    CHECK(!info.schemas.empty());
    CHECK(!info.dtypes.empty());
    CHECK(static_cast<bool>(info.samples));
    CHECK(static_cast<bool>(info.op));
    CHECK((static_cast<bool>(info.reference) || static_cast<bool>(info.check)));
    for (const std::string& s : info.schemas) {
      INFO("schema ", s);
      auto op = dispatch::Dispatcher::singleton().find("aten::" + s);
      CHECK((op.has_value() && op->entry().has_schema()));
    }
  }
  // The Meta pass's list of data-dependent entries names entries of the table.
  for (const auto& [entry, why] : kMetaDataDependent) {
    INFO(entry);
    CHECK(std::any_of(op_table().begin(), op_table().end(), [&](const OpInfo& e) { return e.name == entry; }));
  }
}

TEST_CASE("op table: binary ops against their references") { check_family(OpFamily::Binary); }
TEST_CASE("op table: unary ops against their references") { check_family(OpFamily::Unary); }
TEST_CASE("op table: reductions against their references") { check_family(OpFamily::Reduction); }
TEST_CASE("op table: nn functions against their references") { check_family(OpFamily::NN); }
TEST_CASE("op table: matrix products against their references") { check_family(OpFamily::Linalg); }
TEST_CASE("op table: shape and data movement against their references") { check_family(OpFamily::Indexing); }

TEST_CASE("docs/ops.md holds the generated operator tables") {
  std::ifstream in(ANATOMY_SOURCE_DIR "/docs/ops.md");
  REQUIRE(in.good());
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  const std::string begin = "<!-- generated by scripts/update-ops-doc.sh: begin -->\n";
  const std::string end = "<!-- generated: end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  REQUIRE_MESSAGE((b != std::string::npos && e != std::string::npos), "docs/ops.md lacks the generated markers");
  std::string section = doc.substr(b + begin.size(), e - b - begin.size());
  std::string expected = render_ops_markdown();
#if !ANATOMY_WITH_CUDA
  // Without the CUDA backend compiled in, this build cannot know the CUDA column: compare the rest.
  section = without_cuda_column(section);
  expected = without_cuda_column(expected);
#endif
  CHECK_MESSAGE(section == expected, "docs/ops.md is out of date: run scripts/update-ops-doc.sh (in a CUDA build)");
}
