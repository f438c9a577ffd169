// The op table through gradcheck: every differentiable entry (testing/op_table.h) runs on its
// small fp64 samples with the fp64 inputs requiring grad, and autograd's first derivatives are
// compared with finite differences (gradcheck), second derivatives too where every input is
// tiny (gradgradcheck). A tiny sample is also run with its inputs copied into a strided layout
// and to a storage offset, where the entry's own samples have not covered that layout, and the
// test asserts that every entry was gradchecked and gradgradchecked with a non-contiguous input
// and with one at an offset (kLayoutExceptions says which are not, and why). An entry whose output does not record
// history when an input requires grad (no Autograd kernel, and not a composite of operators that have one), or that
// refuses a second derivative, fails, as does a formula that disagrees with finite differences.
// tests/autograd/test_every_op_records.cpp covers the operators outside the table.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "anatomy/dispatch/operator_entry.h"
#include "anatomy/testing/op_table.h"

using namespace anatomy;
using namespace anatomy::testing;

namespace {

// gradcheck runs one backward per output element and two forwards per input element.
constexpr int64_t kMaxNumel = 64;
// gradgradcheck's cost grows with the square of the elements: every sample up to 16 of them, and
// one up to 36 where it gives the entry a layout (non-contiguous, offset) not yet covered.
constexpr int64_t kMaxNumelGradgrad = 16;
constexpr int64_t kMaxNumelGradgradNewLayout = 36;

// Entries whose samples sit where the derivative does not exist, with why.
const std::map<std::string, std::string> kSkipped = {
    {"dropout", "random: every call draws a new mask, so finite differences see different functions"},
};

// Differentiable entries not checked on a strided and an offset input, with why.
const std::map<std::string, std::string> kLayoutExceptions = {
    {"_to_copy_fp32", "output below fp64: finite differences cannot resolve it (tests/autograd/test_gradcheck.cpp)"},
    {"_to_copy_fp16", "output below fp64: finite differences cannot resolve it (tests/autograd/test_gradcheck.cpp)"},
    {"_to_copy_bf16", "output below fp64: finite differences cannot resolve it (tests/autograd/test_gradcheck.cpp)"},
};

bool has_label_part(const SampleInput& s, const char* part) { return s.label.find(part) != std::string::npos; }

// Error-check samples (their calls are meant to fail) and samples at ties (sort's and topk's:
// moving one of two equal values swaps them, so the derivative does not exist there).
bool unsuitable(const SampleInput& s) {
  return s.label.rfind("in-place", 0) == 0 || has_label_part(s, "error") || has_label_part(s, "ties");
}

bool small_enough(const SampleInput& s, int64_t limit) {
  for (const Tensor& t : s.tensors) {
    if (t.defined() && t.numel() > limit) return false;
  }
  return true;
}

// NaN and infinities make finite differences meaningless.
bool all_finite(const SampleInput& s) {
  for (const Tensor& t : s.tensors) {
    if (!t.defined() || !is_floating(t.dtype())) continue;
    for (double v : to_ref(t).data) {
      if (!std::isfinite(v)) return false;
    }
  }
  return true;
}

// An expanded view shows one memory element at several positions, and finite differences move
// them together: such an input is given a contiguous copy of its values.
bool overlaps(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) return true;
  }
  return false;
}

// The sample's tensors with every fp64 tensor (not a wrapped Python-style scalar) requiring
// grad; other dtypes stay constants (gradcheck perturbs fp64 only).
std::vector<Tensor> grad_inputs(const SampleInput& s, bool& any) {
  std::vector<Tensor> out;
  for (const Tensor& t : s.tensors) {
    if (!t.defined() || t.dtype() != DType::Float64 || t.impl()->is_wrapped_number()) {
      out.push_back(t);
      continue;
    }
    // The copy's repeated values are ties, where max, amax or the inf-norm have no derivative:
    // a small ramp keeps them apart.
    Tensor x = t;
    if (overlaps(t)) {
      autograd::NoGradGuard no_grad;
      x = t.contiguous() + arange(0, t.numel(), 1, DType::Float64).reshape(t.sizes()) * 1e-2;
    }
    x.requires_grad_();
    out.push_back(x);
    any = true;
  }
  return out;
}

// Whether the entry's operator has its own autograd kernel (its formula is what is checked).
bool has_own_formula(const OpInfo& info) {
  if (info.schemas.empty()) return false;
  const auto& entry = dispatch::Dispatcher::singleton().find_or_throw("aten::" + info.schemas[0]).entry();
  return entry.registered(dispatch::RegKey::Autograd) || entry.registered(dispatch::RegKey::AutogradCPU);
}

// Whether autograd reaches every input that requires grad from the outputs.
bool reaches_every_input(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outs, seeds, diff;
  for (const Tensor& o : outputs) {
    if (o.defined() && o.requires_grad()) {
      outs.push_back(o);
      seeds.push_back(ones_like(o));
    }
  }
  for (const Tensor& x : inputs) {
    if (x.defined() && x.requires_grad()) diff.push_back(x);
  }
  for (const Tensor& g : autograd::grad(outs, diff, seeds, /*retain_graph=*/false, false, /*allow_unused=*/true)) {
    if (!g.defined()) return false;
  }
  return true;
}

// The layouts a small sample is checked in besides its own: every fp64 input (not an expanded
// one, nor a wrapped scalar) copied into a layout with every stride doubled (non-contiguous,
// yet viewable as the dense one is) and into a dense one at a storage offset. The values are
// the same, so the reference answers are too; the kernels and formulas see the strides.
enum class Layout { Strided, Offset };

Tensor relaid(const Tensor& t, Layout layout) {
  if (!t.defined() || t.dtype() != DType::Float64 || t.impl()->is_wrapped_number() || overlaps(t)) return t;
  const int64_t n = t.numel();
  if (layout == Layout::Strided && n <= 1) return t;  // one element has no layout to vary
  std::vector<int64_t> strides(static_cast<size_t>(t.dim()), 1);
  for (int64_t d = t.dim() - 2; d >= 0; --d) strides[d] = strides[d + 1] * std::max<int64_t>(t.sizes()[d + 1], 1);
  const int64_t step = layout == Layout::Strided ? 2 : 1, offset = layout == Layout::Offset ? 3 : 0;
  for (int64_t& st : strides) st *= step;
  autograd::NoGradGuard no_grad;
  Tensor out = zeros({step * n + offset}, DType::Float64).as_strided(t.sizes(), strides, offset);
  out.copy_(t.detach());
  return out;
}

// The sample with its fp64 inputs relaid, or nullopt when no input changes layout.
std::optional<SampleInput> relaid_sample(const SampleInput& s, Layout layout) {
  SampleInput r = s;
  bool changed = false;
  for (Tensor& t : r.tensors) {
    Tensor x = relaid(t, layout);
    changed = changed || !x.is_same(t);
    t = x;
  }
  if (!changed) return std::nullopt;
  return r;  // the label stays: some entries read it (einsum's equation)
}

struct Findings {
  std::set<std::string> checked, missing, no_double_backward, skipped;
  // Entries gradchecked (and gradgradchecked) with a non-contiguous fp64 input that requires
  // grad, and with one at a storage offset.
  std::set<std::string> strided, offset, strided_gradgrad, offset_gradgrad;
};

bool any_input(const std::vector<Tensor>& inputs, bool (*pred)(const Tensor&)) {
  return std::any_of(inputs.begin(), inputs.end(),
                     [&](const Tensor& t) { return t.defined() && t.requires_grad() && pred(t); });
}
bool non_contiguous(const Tensor& t) { return t.numel() > 1 && !t.is_contiguous(); }
bool at_offset(const Tensor& t) { return t.numel() > 0 && t.storage_offset() > 0; }

// Checks one sample; returns false when the entry turns out to have no derivative.
bool check_sample(const OpInfo& info, const SampleInput& sample, Findings& f, const char* relaid_as = "") {
  bool any = false;
  const std::vector<Tensor> inputs = grad_inputs(sample, any);
  if (!any) return true;
  const autograd::GradcheckFn fn = [&info, &sample](const std::vector<Tensor>& xs) {
    SampleInput s = sample;
    s.tensors = xs;
    return info.op(s);
  };
  INFO(info.name, " (", sample.label, ")", relaid_as);
  std::vector<Tensor> outputs;
  try {
    outputs = fn(inputs);
  } catch (const NotImplementedError& e) {
    f.missing.insert(info.name + " (" + e.what() + ")");
    return false;
  }
  // A cast to fp32, fp16 or bf16 rounds away the finite-difference step: such an entry's
  // derivative is checked by the dedicated tests (test_gradcheck.cpp), not here.
  for (const Tensor& o : outputs) {
    if (o.defined() && is_floating(o.dtype()) && o.dtype() != DType::Float64) {
      f.skipped.insert(info.name + " (output below fp64: finite differences cannot resolve it)");
      return false;
    }
  }
  // NaN or an infinity in the output (pow of a negative base, var of one element with
  // correction 1): no derivative there.
  for (const Tensor& o : outputs) {
    if (!o.defined() || !is_floating(o.dtype())) continue;
    for (double v : to_ref(o.detach()).data) {
      if (!std::isfinite(v)) return true;
    }
  }
  bool floating = false, recorded = false;
  for (const Tensor& o : outputs) {
    floating = floating || (o.defined() && is_floating(o.dtype()));
    recorded = recorded || (o.defined() && o.requires_grad());
  }
  if (floating && !recorded) {
    f.missing.insert(info.name);
    return false;
  }
  std::string report;
  try {
    report = autograd::gradcheck_report(fn, inputs);
  } catch (const NotImplementedError& e) {  // a formula that refuses this case
    f.missing.insert(info.name + " (" + e.what() + ")");
    return false;
  }
  if (!report.empty()) {
    // A composite whose parts lack a derivative drops the gradient of some input.
    if (!has_own_formula(info) && !reaches_every_input(fn(inputs), inputs)) {
      f.missing.insert(info.name + " (a part of the composite)");
      return false;
    }
    FAIL_CHECK(report);
    return true;
  }
  f.checked.insert(info.name);
  const bool strided = any_input(inputs, non_contiguous), offset = any_input(inputs, at_offset);
  if (strided) f.strided.insert(info.name);
  if (offset) f.offset.insert(info.name);
  const bool new_layout =
      (strided && f.strided_gradgrad.count(info.name) == 0) || (offset && f.offset_gradgrad.count(info.name) == 0);
  if (!small_enough(sample, new_layout ? kMaxNumelGradgradNewLayout : kMaxNumelGradgrad)) return true;
  try {
    const std::string second = autograd::gradgradcheck_report(fn, inputs);
    CHECK_MESSAGE(second.empty(), "gradgradcheck: ", second);
    if (second.empty() && strided) f.strided_gradgrad.insert(info.name);
    if (second.empty() && offset) f.offset_gradgrad.insert(info.name);
  } catch (const NotImplementedError& e) {
    f.no_double_backward.insert(info.name + " (" + e.what() + ")");
  }
  return true;
}

}  // namespace

TEST_CASE("gradcheck of every differentiable op-table entry on its small fp64 samples") {
  Findings f;
  std::vector<std::string> differentiable;
  for (const OpInfo& info : op_table()) {
    if (!info.differentiable) continue;
    if (auto it = kSkipped.find(info.name); it != kSkipped.end()) {
      f.skipped.insert(info.name + " (" + it->second + ")");
      continue;
    }
    differentiable.push_back(info.name);  // an entry without fp64 samples is reported uncovered
    if (std::find(info.dtypes.begin(), info.dtypes.end(), DType::Float64) == info.dtypes.end()) continue;
    manual_seed(1234);
    for (const SampleInput& sample : info.samples(DType::Float64)) {
      if (unsuitable(sample) || !small_enough(sample, kMaxNumel) || !all_finite(sample)) continue;
      if (!check_sample(info, sample, f)) break;
      bool ok = true;
      for (Layout layout : {Layout::Strided, Layout::Offset}) {
        // One relaid sample per layout suffices where the entry's own samples have not done it.
        if ((layout == Layout::Strided ? f.strided_gradgrad : f.offset_gradgrad).count(info.name) == 1) continue;
        const char* how = layout == Layout::Strided ? ", inputs relaid strided" : ", inputs relaid at an offset";
        if (std::optional<SampleInput> r = relaid_sample(sample, layout); ok && r) ok = check_sample(info, *r, f, how);
      }
      if (!ok) break;
    }
  }
  MESSAGE("gradchecked: ", fmt::format("{}", fmt::join(f.checked, ", ")));
  // Every differentiable entry records its history and has a double backward: an entry that
  // drops the graph (as unfold did, outside the table) or refuses a second derivative fails.
  CHECK_MESSAGE(f.missing.empty(), "no derivative: ", fmt::format("{}", fmt::join(f.missing, ", ")));
  CHECK_MESSAGE(f.no_double_backward.empty(),
                "no double backward: ", fmt::format("{}", fmt::join(f.no_double_backward, ", ")));
  MESSAGE("skipped: ", fmt::format("{}", fmt::join(f.skipped, ", ")));
  // Every entry checked, first and second derivatives alike, with a non-contiguous input and
  // with one at a storage offset.
  const std::map<std::string, std::set<std::string>*> coverage = {
      {"gradcheck, non-contiguous", &f.strided},
      {"gradcheck, offset", &f.offset},
      {"gradgradcheck, non-contiguous", &f.strided_gradgrad},
      {"gradgradcheck, offset", &f.offset_gradgrad}};
  for (const auto& [what, covered] : coverage) {
    std::vector<std::string> lacking;
    for (const std::string& e : differentiable) {
      if (covered->count(e) == 0 && kLayoutExceptions.count(e) == 0) lacking.push_back(e);
    }
    MESSAGE(what, ": ", covered->size(), " of ", differentiable.size(), " entries");
    CHECK_MESSAGE(lacking.empty(), what, " never ran on: ", fmt::format("{}", fmt::join(lacking, ", ")));
  }
  // Formulas that exist since autograd's first version: the driver must have reached them.
  CHECK(f.checked.count("add") == 1);
  CHECK(f.checked.count("mul") == 1);
}
