// Op-table entries of native_batch_norm_backward and native_group_norm_backward. Each sample
// holds the gradient, the input and what the forward saved (computed here by the CPU forward in
// the sample's dtype), so the fp64 reference reads the same statistics as the operator. The
// results the output_mask (ints after the first) leaves out are not returned.
#include <cmath>

#include "anatomy/testing/layouts.h"
#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kFloat = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
constexpr double kEps = 1e-5;

bool is_reduced(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
// The parameter gradients are sums over N * S (or N) values, in fp32 for fp32 inputs.
Tolerance backward_tolerance(DType t) { return t == DType::Float32 ? Tolerance{1e-5, 1e-5} : default_tolerance(t); }

std::array<bool, 3> mask_at(const SampleInput& s) { return {s.ints[1] != 0, s.ints[2] != 0, s.ints[3] != 0}; }

// The results the mask asks for, in order.
std::vector<Tensor> masked(const SampleInput& s, const std::tuple<Tensor, Tensor, Tensor>& r) {
  const std::array<bool, 3> m = mask_at(s);
  std::vector<Tensor> out;
  if (m[0]) out.push_back(std::get<0>(r));
  if (m[1]) out.push_back(std::get<1>(r));
  if (m[2]) out.push_back(std::get<2>(r));
  return out;
}
std::vector<RefTensor> masked(const SampleInput& s, std::vector<RefTensor> r) {
  const std::array<bool, 3> m = mask_at(s);
  std::vector<RefTensor> out;
  for (size_t i = 0; i < 3; ++i) {
    if (m[i]) out.push_back(std::move(r[i]));
  }
  return out;
}

// x of shape (N, C, *) as (N, C, S) row-major.
struct NCS {
  int64_t N, C, S;
  explicit NCS(const RefTensor& x) : N(x.shape[0]), C(x.shape[1]), S(1) {
    for (size_t d = 2; d < x.shape.size(); ++d) S *= x.shape[d];
  }
  int64_t at(int64_t n, int64_t c, int64_t s) const { return (n * C + c) * S + s; }
};

// ---- batch_norm: tensors {grad, input, weight, running_mean, running_var, save_mean,
// save_invstd}, ints {train, output_mask...} ----

SampleInput batch_norm_sample(std::string label, const Tensor& x, const Tensor& g, DType param, bool weight, bool train,
                              std::vector<int64_t> mask) {
  const int64_t C = x.size(1);
  const Tensor w = weight ? random_tensor({C}, param) : Tensor();
  const Tensor rm = random_tensor({C}, param), rv = random_tensor({C}, param, Domain{0.5, 2.0});
  auto [y, mean, invstd] = native_batch_norm(x, opt(w), std::nullopt, rm.clone(), rv.clone(), train, 0.1, kEps);
  std::vector<int64_t> ints{train};
  ints.insert(ints.end(), mask.begin(), mask.end());
  return make_sample(std::move(label), {g, x, w, rm, rv, mean, invstd}, {}, ints);
}

std::vector<SampleInput> batch_norm_backward_samples(DType t) {
  std::vector<SampleInput> out;
  auto add = [&](std::string label, const Tensor& x, bool weight, bool train, std::vector<int64_t> mask,
                 DType param = DType::Float64) {
    const DType p = param == DType::Float64 ? t : param;
    out.push_back(batch_norm_sample(std::move(label), x, random_tensor(x.sizes().vec(), t), p, weight, train, mask));
  };
  add("train 2-d", random_tensor({6, 3}, t), true, true, {1, 1, 1});
  add("train 4-d", random_tensor({2, 3, 4, 5}, t), true, true, {1, 1, 1});
  add("eval 3-d", random_tensor({3, 4, 5}, t), true, false, {1, 1, 1});
  add("train without weight", random_tensor({4, 3, 6}, t), false, true, {1, 0, 1});
  add("train, input gradient only", random_tensor({4, 3, 6}, t), true, true, {1, 0, 0});
  add("eval, parameter gradients only", random_tensor({4, 3, 6}, t), true, false, {0, 1, 1});
  add("train channels_last", channels_last_copy(random_tensor({2, 8, 3, 4}, t)), true, true, {1, 1, 1});
  add("eval channels_last 3-d", channels_last_copy(random_tensor({2, 4, 2, 3, 2}, t)), true, false, {1, 1, 1});
  add("train transposed", random_tensor({5, 3, 4}, t).transpose(0, 2), true, true, {1, 1, 1});
  add("eval, zero-size batch", random_tensor({0, 3, 4}, t), true, false, {1, 1, 1});
  add("train, many rows", random_tensor({16, 4, 8, 8}, t), true, true, {1, 1, 1});
  if (is_reduced(t)) {
    add("mixed precision train", channels_last_copy(random_tensor({2, 8, 3, 3}, t)), true, true, {1, 1, 1},
        DType::Float32);
    add("mixed precision eval", random_tensor({3, 4, 5}, t), true, false, {1, 1, 1}, DType::Float32);
  }
  return out;
}

std::vector<RefTensor> batch_norm_backward_ref(const std::vector<RefTensor>& in, const SampleInput& s) {
  const RefTensor &g = in[0], &x = in[1], &w = in[2];
  const bool train = s.ints[0] != 0;
  const NCS d(x);
  const double M = static_cast<double>(d.N * d.S);
  const DType param = w.defined ? w.dtype : x.dtype;
  RefTensor dx(x.shape, x.dtype), dw({d.C}, param), db({d.C}, param);
  for (int64_t c = 0; c < d.C; ++c) {
    const double mean = train ? in[5].data[c] : in[3].data[c];
    const double invstd = train ? in[6].data[c] : 1 / std::sqrt(in[4].data[c] + kEps);
    const double wc = w.defined ? w.data[c] : 1.0;
    double sum_dy = 0, sum_dy_xmu = 0;
    for (int64_t n = 0; n < d.N; ++n)
      for (int64_t i = 0; i < d.S; ++i) {
        sum_dy += g.data[d.at(n, c, i)];
        sum_dy_xmu += g.data[d.at(n, c, i)] * (x.data[d.at(n, c, i)] - mean);
      }
    dw.data[c] = sum_dy_xmu * invstd;
    db.data[c] = sum_dy;
    for (int64_t n = 0; n < d.N; ++n)
      for (int64_t i = 0; i < d.S; ++i) {
        const int64_t k = d.at(n, c, i);
        double v = g.data[k];
        if (train) v -= sum_dy / M + (x.data[k] - mean) * invstd * invstd * sum_dy_xmu / M;
        dx.data[k] = wc * invstd * v;
      }
  }
  return masked(s, {dx, dw, db});
}

std::vector<ErrorInput> batch_norm_backward_errors() {
  const Tensor none, x = randn({4, 3}), w = randn({3}), m = randn({3}), r = rand({3});
  return {
      make_error("grad of the wrong shape", {randn({4, 2}), x, w, none, none, m, r}, typeid(ValueError),
                 {"native_batch_norm_backward", "grad_out", "[4, 2]", "[4, 3]"}, {}, {1, 1, 1, 1}),
      make_error("save_invstd missing when training", {randn({4, 3}), x, w, none, none, m, none}, typeid(ValueError),
                 {"native_batch_norm_backward", "save_invstd"}, {}, {1, 1, 1, 1}),
  };
}

// ---- group_norm: tensors {grad, input, mean, rstd, weight}, ints {group, output_mask...} ----

std::vector<SampleInput> group_norm_backward_samples(DType t) {
  std::vector<SampleInput> out;
  auto add = [&](std::string label, const Tensor& x, int64_t group, bool weight, std::vector<int64_t> mask,
                 DType param = DType::Float64) {
    const int64_t C = x.size(1);
    const Tensor w = weight ? random_tensor({C}, param == DType::Float64 ? t : param) : Tensor();
    int64_t hxw = 1;
    for (int64_t dim = 2; dim < x.dim(); ++dim) hxw *= x.size(dim);
    auto [y, mean, rstd] = native_group_norm(x, opt(w), std::nullopt, x.size(0), C, hxw, group, kEps);
    std::vector<int64_t> ints{group};
    ints.insert(ints.end(), mask.begin(), mask.end());
    out.push_back(make_sample(std::move(label), {random_tensor(x.sizes().vec(), t), x, mean, rstd, w}, {}, ints));
  };
  add("3-d", random_tensor({2, 6, 5}, t), 3, true, {1, 1, 1});
  add("4-d without weight", random_tensor({2, 4, 3, 3}, t), 2, false, {1, 0, 1});
  add("input gradient only", random_tensor({3, 4, 5}, t), 4, true, {1, 0, 0});
  add("parameter gradients only", random_tensor({3, 4, 5}, t), 1, true, {0, 1, 1});
  add("channels_last", channels_last_copy(random_tensor({2, 6, 3, 4}, t)), 3, true, {1, 1, 1});
  add("zero-size batch", random_tensor({0, 4, 3}, t), 2, true, {1, 1, 1});
  if (is_reduced(t)) add("mixed precision", random_tensor({2, 4, 5}, t), 2, true, {1, 1, 1}, DType::Float32);
  return out;
}

std::vector<RefTensor> group_norm_backward_ref(const std::vector<RefTensor>& in, const SampleInput& s) {
  const RefTensor &g = in[0], &x = in[1], &w = in[4];
  const int64_t group = s.ints[0];
  const NCS d(x);
  const int64_t cpg = d.C / group;
  const double count = static_cast<double>(cpg * d.S);
  const DType param = w.defined ? w.dtype : x.dtype;
  RefTensor dx(x.shape, x.dtype), dw({d.C}, param), db({d.C}, param);
  for (int64_t n = 0; n < d.N; ++n) {
    for (int64_t gr = 0; gr < group; ++gr) {
      const double mean = in[2].data[n * group + gr], rstd = in[3].data[n * group + gr];
      double sum_gw = 0, sum_gw_xhat = 0;
      for (int64_t c = gr * cpg; c < (gr + 1) * cpg; ++c)
        for (int64_t i = 0; i < d.S; ++i) {
          const int64_t k = d.at(n, c, i);
          const double gw = g.data[k] * (w.defined ? w.data[c] : 1.0), xhat = (x.data[k] - mean) * rstd;
          sum_gw += gw;
          sum_gw_xhat += gw * xhat;
          dw.data[c] += g.data[k] * xhat;
          db.data[c] += g.data[k];
        }
      for (int64_t c = gr * cpg; c < (gr + 1) * cpg; ++c)
        for (int64_t i = 0; i < d.S; ++i) {
          const int64_t k = d.at(n, c, i);
          const double gw = g.data[k] * (w.defined ? w.data[c] : 1.0), xhat = (x.data[k] - mean) * rstd;
          dx.data[k] = rstd * (gw - sum_gw / count - xhat * sum_gw_xhat / count);
        }
    }
  }
  return masked(s, {dx, dw, db});
}

std::vector<ErrorInput> group_norm_backward_errors() {
  const Tensor x = randn({2, 4, 3});
  return {
      make_error("mean of the wrong size", {randn({2, 4, 3}), x, randn({2, 3}), rand({2, 2}), randn({4})},
                 typeid(ValueError), {"native_group_norm_backward", "mean", "4", "6"}, {}, {2, 1, 1, 1}),
      make_error("channels not divisible by groups", {randn({2, 4, 3}), x, randn({2, 3}), rand({2, 3}), randn({4})},
                 typeid(ValueError), {"native_group_norm_backward", "divisible by num_groups"}, {}, {3, 1, 1, 1}),
  };
}

std::vector<Tensor> call_group_norm_backward(const SampleInput& s) {
  const std::vector<Tensor>& t = s.tensors;
  const Tensor& x = t[1];
  int64_t hxw = 1;
  for (int64_t d = 2; d < x.dim(); ++d) hxw *= x.size(d);
  return masked(s, anatomy::native_group_norm_backward(t[0], x, t[2], t[3], opt(t[4]), x.size(0), x.size(1), hxw,
                                                       s.ints[0], mask_at(s)));
}

}  // namespace

ANATOMY_REGISTER_OPS(channel_norm_backward) {
  std::vector<OpInfo> ops;
  OpInfo bn;
  bn.name = "native_batch_norm_backward";
  bn.family = OpFamily::NN;
  bn.schemas = {"native_batch_norm_backward"};
  bn.dtypes = kFloat;
  bn.notes = "train: from save_mean / save_invstd; eval: from the running statistics";
  bn.samples = batch_norm_backward_samples;
  bn.op = [](const SampleInput& s) {
    const std::vector<Tensor>& t = s.tensors;
    return masked(s, anatomy::native_batch_norm_backward(t[0], t[1], opt(t[2]), opt(t[3]), opt(t[4]), opt(t[5]),
                                                         opt(t[6]), s.ints[0] != 0, kEps, mask_at(s)));
  };
  bn.reference = batch_norm_backward_ref;
  bn.tolerance = backward_tolerance;
  bn.error_inputs = batch_norm_backward_errors;
  ops.push_back(bn);

  OpInfo gn;
  gn.name = "native_group_norm_backward";
  gn.family = OpFamily::NN;
  gn.schemas = {"native_group_norm_backward"};
  gn.dtypes = kFloat;
  gn.notes = "from the saved mean and rstd of shape (N, group)";
  gn.samples = group_norm_backward_samples;
  gn.op = call_group_norm_backward;
  gn.reference = group_norm_backward_ref;
  gn.tolerance = backward_tolerance;
  gn.error_inputs = group_norm_backward_errors;
  ops.push_back(gn);
  return ops;
}

}  // namespace anatomy::testing
