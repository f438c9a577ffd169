// Op-table entries: dropout and scaled dot-product attention.
#include <cmath>
#include <limits>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kFloating = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// Attention over the last two dims of [batch..., L, E] inputs, in fp64 loops. mask: absent,
// bool (true attends) or additive; causal hides j > i.
RefTensor attention_reference(const RefTensor& q, const RefTensor& k, const RefTensor& v, const RefTensor& mask,
                              bool causal, double scale) {
  const int64_t nd = q.dim(), L = q.shape[nd - 2], E = q.shape[nd - 1], S = k.shape[nd - 2], Ev = v.shape[nd - 1];
  std::vector<int64_t> out_shape = q.shape;
  out_shape[nd - 1] = Ev;
  RefTensor out(out_shape, q.dtype);
  int64_t batches = 1;
  for (int64_t d = 0; d < nd - 2; ++d) batches *= q.shape[d];
  const bool bool_mask = mask.defined && mask.dtype == DType::Bool;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> w(S);
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < S; ++j) {
        double s = 0;
        for (int64_t e = 0; e < E; ++e) s += q.data[(b * L + i) * E + e] * k.data[(b * S + j) * E + e];
        s *= scale;
        if (causal && j > i) s = -std::numeric_limits<double>::infinity();
        if (mask.defined) {
          // The mask is [L, S] here (broadcast over the batch).
          const double m = mask.data[i * S + j];
          if (bool_mask) {
            if (m == 0) s = -std::numeric_limits<double>::infinity();
          } else {
            s += m;
          }
        }
        w[j] = s;
        mx = std::max(mx, s);
      }
      double total = 0;
      for (double& x : w) total += (x = std::exp(x - mx));
      for (int64_t e = 0; e < Ev; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j) acc += w[j] / total * v.data[(b * S + j) * Ev + e];
        out.data[(b * L + i) * Ev + e] = acc;
      }
    }
  }
  return out;
}

}  // namespace

ANATOMY_REGISTER_OPS(attention) {
  std::vector<OpInfo> ops;

  OpInfo dropout;
  dropout.name = "dropout";
  dropout.family = OpFamily::NN;
  dropout.schemas = {"dropout", "native_dropout"};
  dropout.dtypes = kFloating;
  dropout.differentiable = true;
  dropout.notes = "random: checked by the kept fraction and the scaling, not a reference";
  dropout.samples = [](DType t) {
    std::vector<SampleInput> out;
    for (double p : {0.0, 0.3, 1.0}) {
      SampleInput s;
      s.label = fmt::format("p={}", p);
      s.tensors = {random_tensor({200, 250}, t, Domain{0.5, 2.0})};
      s.scalars = {p};
      out.push_back(s);
    }
    SampleInput eval;
    eval.label = "train=false";
    eval.tensors = {random_tensor({3, 4}, t)};
    eval.scalars = {0.5};
    eval.keepdim = true;  // stands for train = false
    out.push_back(eval);
    return out;
  };
  dropout.op = [](const SampleInput& s) {
    auto [out, mask] = native_dropout(s.tensors[0], s.scalars[0], !s.keepdim);
    return std::vector<Tensor>{out, mask, anatomy::dropout(s.tensors[0], s.scalars[0], !s.keepdim)};
  };
  dropout.check = [](const std::vector<Tensor>& r, const SampleInput& s) -> std::string {
    const RefTensor x = to_ref(s.tensors[0]), out = to_ref(r[0]), mask = to_ref(r[1]), plain = to_ref(r[2]);
    const double p = s.scalars[0];
    const bool train = !s.keepdim;
    if (r[0].dtype() != s.tensors[0].dtype() || r[1].dtype() != DType::Bool) return "wrong result dtypes";
    if (out.shape != x.shape || mask.shape != x.shape || plain.shape != x.shape) return "wrong result shapes";
    const double scale = (!train || p == 1) ? 1.0 : 1.0 / (1.0 - p);
    const Tolerance tol = default_tolerance(s.tensors[0].dtype());
    int64_t kept = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const bool keep = mask.data[i] != 0;
      kept += keep;
      const double want = keep ? round_to(x.data[i] * scale, out.dtype) : 0.0;
      if (std::fabs(out.data[i] - want) > tol.atol + 2 * tol.rtol * std::fabs(want)) {
        return fmt::format("element {}: got {}, expected {}", i, out.data[i], want);
      }
    }
    const double n = static_cast<double>(x.numel());
    const double keep_p = train ? 1.0 - p : 1.0;
    const double sigma = std::sqrt(n * keep_p * (1 - keep_p));
    if (std::fabs(kept - n * keep_p) > 5 * sigma + 0.5) {
      return fmt::format("kept {} of {}, expected about {}", kept, x.numel(), n * keep_p);
    }
    if (!train && plain.data != x.data) return "dropout(train=false) changed its input";
    return "";
  };
  dropout.error_inputs = [] {
    SampleInput s;
    s.tensors = {randn({3})};
    s.scalars = {1.5};
    SampleInput ints;
    ints.tensors = {tensor({1, 2, 3})};
    ints.scalars = {0.5};
    return std::vector<ErrorInput>{{s, &typeid(ValueError), {"dropout", "1.5"}},
                                   {ints, &typeid(TypeError), {"dropout", "floating", "int64"}}};
  };
  ops.push_back(dropout);

  OpInfo sdpa;
  sdpa.name = "scaled_dot_product_attention";
  sdpa.family = OpFamily::NN;
  sdpa.schemas = {"scaled_dot_product_attention"};
  sdpa.dtypes = {DType::Float32, DType::Float64, DType::BFloat16};
  sdpa.differentiable = true;
  sdpa.notes = "math version: a composite of matmul, masked_fill, softmax";
  // Rounding of the intermediate products in the input dtype.
  sdpa.tolerance = [](DType t) {
    return t == DType::BFloat16  ? Tolerance{3e-2, 3e-2}
           : t == DType::Float32 ? Tolerance{1e-5, 1e-5}
                                 : default_tolerance(t);
  };
  sdpa.samples = [](DType t) {
    std::vector<SampleInput> out;
    auto make = [&](std::string label, std::vector<int64_t> qs, int64_t S, Tensor mask, bool causal) {
      SampleInput s;
      s.label = std::move(label);
      std::vector<int64_t> ks = qs, vs = qs;
      ks[ks.size() - 2] = S;
      vs[vs.size() - 2] = S;
      vs[vs.size() - 1] = 3;
      s.tensors = {random_tensor(qs, t, Domain{-1, 1}), random_tensor(ks, t, Domain{-1, 1}),
                   random_tensor(vs, t, Domain{-1, 1}), mask};
      s.keepdim = causal;
      out.push_back(s);
    };
    make("plain", {2, 3, 5, 4}, 6, Tensor(), false);
    make("causal", {2, 5, 4}, 5, Tensor(), true);
    make("bool mask", {2, 5, 4}, 6, randint(0, 2, {5, 6}, DType::Bool), false);
    make("additive mask", {5, 4}, 6, random_tensor({5, 6}, t, Domain{-1, 1}), false);
    return out;
  };
  sdpa.op = [](const SampleInput& s) {
    std::optional<Tensor> mask;
    if (s.tensors[3].defined()) {
      // A bool mask must attend somewhere in each row; the reference and the op agree either way.
      mask = s.tensors[3];
    }
    return std::vector<Tensor>{
        scaled_dot_product_attention(s.tensors[0], s.tensors[1], s.tensors[2], mask, 0.0, s.keepdim)};
  };
  sdpa.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(in[0].shape.back()));
    return std::vector<RefTensor>{attention_reference(in[0], in[1], in[2], in[3], s.keepdim, scale)};
  };
  sdpa.error_inputs = [] {
    SampleInput s;
    s.tensors = {randn({2, 5, 4}), randn({2, 6, 3}), randn({2, 6, 3}), Tensor()};
    return std::vector<ErrorInput>{{s, &typeid(ValueError), {"scaled_dot_product_attention", "4", "3"}}};
  };
  ops.push_back(sdpa);
  return ops;
}

}  // namespace anatomy::testing
