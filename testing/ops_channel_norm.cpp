// Op-table entries: batch_norm, native_batch_norm, group_norm and native_group_norm, against
// fp64 references written with plain loops. The running statistics are not sample tensors (the
// gradchecks would perturb them, and they get no gradient): each call makes them from fixed
// values, chosen by the sample's ints {training, with running statistics, statistics in
// float32}. tests/core/test_channel_norm.cpp checks their in-place update and the layouts.
#include <cmath>

#include "anatomy/testing/layouts.h"
#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kFloat = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
constexpr double kEps = 1e-5;
constexpr double kMomentum = 0.1;

bool is_reduced(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

// The fixed running statistics (exact in every floating dtype).
double running_mean_at(int64_t c) { return 0.25 * static_cast<double>(c % 8) - 0.5; }
double running_var_at(int64_t c) { return 0.5 + 0.25 * static_cast<double>(c % 8); }

struct BatchNormCall {
  bool training, running, fp32_stats;
};
BatchNormCall call_of(const SampleInput& s) { return {s.ints[0] != 0, s.ints[1] != 0, s.ints[2] != 0}; }

std::pair<std::optional<Tensor>, std::optional<Tensor>> running_stats(const SampleInput& s) {
  const BatchNormCall k = call_of(s);
  if (!k.running) return {std::nullopt, std::nullopt};
  const int64_t C = s.tensors[0].size(1);
  std::vector<double> m, v;
  for (int64_t c = 0; c < C; ++c) {
    m.push_back(running_mean_at(c));
    v.push_back(running_var_at(c));
  }
  const DType t = k.fp32_stats ? DType::Float32 : s.tensors[0].dtype();
  // On the input's device: the CUDA run of the table moves only the sample's tensors.
  const Device device = s.tensors[0].device();
  return {tensor(m, {C}, DType::Float64).to(t).to(device), tensor(v, {C}, DType::Float64).to(t).to(device)};
}

std::vector<Tensor> call_native_batch_norm(const SampleInput& s) {
  auto [rm, rv] = running_stats(s);
  auto [y, mean, invstd] = anatomy::native_batch_norm(s.tensors[0], opt(s.tensors[1]), opt(s.tensors[2]), rm, rv,
                                                      call_of(s).training, kMomentum, kEps);
  return {y, mean, invstd};
}

// x of shape (N, C, *) seen as (N, C, S) row-major: element (n, c, s).
struct NCS {
  int64_t N, C, S;
  explicit NCS(const RefTensor& x) : N(x.shape[0]), C(x.shape[1]), S(1) {
    for (size_t d = 2; d < x.shape.size(); ++d) S *= x.shape[d];
  }
  int64_t at(int64_t n, int64_t c, int64_t s) const { return (n * C + c) * S + s; }
};

std::vector<RefTensor> batch_norm_ref(const std::vector<RefTensor>& in, const SampleInput& s) {
  const RefTensor& x = in[0];
  const BatchNormCall k = call_of(s);
  const NCS d(x);
  const DType stat = is_reduced(x.dtype) ? DType::Float32 : x.dtype;
  RefTensor y(x.shape, x.dtype), mean({d.C}, stat), invstd({d.C}, stat);
  for (int64_t c = 0; c < d.C; ++c) {
    double m = 0, v = 0;
    if (k.training) {
      const double count = static_cast<double>(d.N * d.S);
      for (int64_t n = 0; n < d.N; ++n)
        for (int64_t i = 0; i < d.S; ++i) m += x.data[d.at(n, c, i)];
      m /= count;
      for (int64_t n = 0; n < d.N; ++n)
        for (int64_t i = 0; i < d.S; ++i) v += (x.data[d.at(n, c, i)] - m) * (x.data[d.at(n, c, i)] - m);
      v /= count;
    } else {
      m = running_mean_at(c);
      v = running_var_at(c);
    }
    const double r = 1 / std::sqrt(v + kEps);
    mean.data[c] = m;
    invstd.data[c] = r;
    const double w = in[1].defined ? in[1].data[c] : 1.0, b = in[2].defined ? in[2].data[c] : 0.0;
    for (int64_t n = 0; n < d.N; ++n)
      for (int64_t i = 0; i < d.S; ++i) y.data[d.at(n, c, i)] = (x.data[d.at(n, c, i)] - m) * r * w + b;
  }
  return {y, mean, invstd};
}

// Random (N, C, spatial...) values laid out with the channels innermost.
Tensor channels_last(const std::vector<int64_t>& shape, DType t) { return channels_last_copy(random_tensor(shape, t)); }

// Per-channel weight and bias, float32 for a mixed-precision sample.
std::vector<Tensor> with_affine(const Tensor& x, DType param) {
  const int64_t C = x.size(1);
  return {x, random_tensor({C}, param), random_tensor({C}, param)};
}

std::vector<SampleInput> batch_norm_samples(DType t) {
  std::vector<SampleInput> out;
  auto add = [&](std::string label, std::vector<Tensor> tensors, bool training, bool running, bool fp32 = false) {
    out.push_back(make_sample(std::move(label), std::move(tensors), {}, {training, running, fp32}));
  };
  const Tensor none;
  add("2-d train, small", with_affine(random_tensor({4, 2}, t), t), true, true);
  add("3-d eval, small", with_affine(random_tensor({2, 2, 3}, t), t), false, true);
  add("3-d train without weight and bias, small", {random_tensor({3, 2, 2}, t), none, none}, true, false);
  add("2-d train", with_affine(random_tensor({6, 3}, t), t), true, true);
  add("3-d train without weight and bias", {random_tensor({4, 3, 5}, t), none, none}, true, true);
  add("4-d train without running stats", with_affine(random_tensor({2, 3, 4, 5}, t), t), true, false);
  add("5-d train", with_affine(random_tensor({2, 3, 2, 3, 2}, t), t), true, true);
  add("4-d eval", with_affine(random_tensor({2, 3, 4, 5}, t), t), false, true);
  add("2-d eval without weight and bias", {random_tensor({5, 4}, t), none, none}, false, true);
  add("channels_last train", with_affine(channels_last({2, 4, 3, 5}, t), t), true, true);
  add("channels_last eval", with_affine(channels_last({2, 4, 3, 5}, t), t), false, true);
  add("channels_last 3-d train", with_affine(channels_last({2, 4, 2, 3, 2}, t), t), true, true);
  add("transposed", with_affine(random_tensor({5, 3, 4}, t).transpose(0, 2), t), true, true);
  add("offset", with_affine(random_tensor({4, 5, 6}, t).slice(0, 1).slice(1, 1).slice(2, 2), t), true, true);
  add("zero-size batch, eval", with_affine(random_tensor({0, 3, 4}, t), t), false, true);
  add("zero channels", {random_tensor({2, 0, 4}, t), none, none}, true, false);
  add("large", with_affine(random_tensor({4, 8, 16, 16}, t), t), true, true);
  if (is_reduced(t)) {
    add("mixed precision: float32 parameters, train", with_affine(random_tensor({3, 4, 5}, t), DType::Float32), true,
        true, true);
    add("mixed precision: float32 parameters, channels_last eval",
        with_affine(channels_last({2, 4, 3, 3}, t), DType::Float32), false, true, true);
  }
  return out;
}

std::vector<ErrorInput> batch_norm_errors() {
  const Tensor none;
  return {
      make_error("weight of the wrong size", {randn({4, 3}), randn({4}), none}, typeid(ValueError),
                 {"native_batch_norm", "weight", "3", "4"}, {}, {1, 1, 0}),
      make_error("eval without running stats", {randn({4, 3}), none, none}, typeid(ValueError),
                 {"native_batch_norm", "running_mean must be defined in evaluation mode"}, {}, {0, 0, 0}),
      make_error("one value per channel when training", {randn({1, 3}), none, none}, typeid(ValueError),
                 {"native_batch_norm", "Expected more than 1 value per channel when training", "[1, 3]"}, {},
                 {1, 1, 0}),
      make_error("1-d input", {randn({4}), none, none}, typeid(ValueError), {"native_batch_norm", "2 or more dims"}, {},
                 {1, 0, 0}),
      make_error("integer input", {tensor({1, 2, 3, 4}).reshape({2, 2}), none, none}, typeid(TypeError),
                 {"native_batch_norm", "int64"}, {}, {1, 0, 0}),
      make_error("float32 weight for a float64 input", {randn({4, 3}, DType::Float64), randn({3}), none},
                 typeid(TypeError), {"native_batch_norm", "weight", "fp32", "fp64"}, {}, {1, 0, 0}),
  };
}

// group_norm: ints {num_groups}.
std::vector<RefTensor> group_norm_ref(const std::vector<RefTensor>& in, const SampleInput& s) {
  const RefTensor& x = in[0];
  const int64_t group = s.ints[0];
  const NCS d(x);
  const int64_t cpg = d.C / group;
  const bool mixed = is_reduced(x.dtype) && ((in[1].defined && in[1].dtype == DType::Float32) ||
                                             (in[2].defined && in[2].dtype == DType::Float32));
  const DType stat = mixed ? DType::Float32 : x.dtype;
  RefTensor y(x.shape, x.dtype), mean({d.N, group}, stat), rstd({d.N, group}, stat);
  for (int64_t n = 0; n < d.N; ++n) {
    for (int64_t g = 0; g < group; ++g) {
      const double count = static_cast<double>(cpg * d.S);
      double m = 0, v = 0;
      for (int64_t c = g * cpg; c < (g + 1) * cpg; ++c)
        for (int64_t i = 0; i < d.S; ++i) m += x.data[d.at(n, c, i)];
      m /= count;
      for (int64_t c = g * cpg; c < (g + 1) * cpg; ++c)
        for (int64_t i = 0; i < d.S; ++i) v += (x.data[d.at(n, c, i)] - m) * (x.data[d.at(n, c, i)] - m);
      const double r = 1 / std::sqrt(v / count + kEps);
      mean.data[n * group + g] = m;
      rstd.data[n * group + g] = r;
      for (int64_t c = g * cpg; c < (g + 1) * cpg; ++c) {
        const double w = in[1].defined ? in[1].data[c] : 1.0, b = in[2].defined ? in[2].data[c] : 0.0;
        for (int64_t i = 0; i < d.S; ++i) y.data[d.at(n, c, i)] = (x.data[d.at(n, c, i)] - m) * r * w + b;
      }
    }
  }
  return {y, mean, rstd};
}

std::vector<Tensor> call_native_group_norm(const SampleInput& s) {
  const Tensor& x = s.tensors[0];
  int64_t hxw = 1;
  for (int64_t d = 2; d < x.dim(); ++d) hxw *= x.size(d);
  auto [y, mean, rstd] =
      anatomy::native_group_norm(x, opt(s.tensors[1]), opt(s.tensors[2]), x.size(0), x.size(1), hxw, s.ints[0], kEps);
  return {y, mean, rstd};
}

std::vector<SampleInput> group_norm_samples(DType t) {
  std::vector<SampleInput> out;
  auto add = [&](std::string label, std::vector<Tensor> tensors, int64_t group) {
    out.push_back(make_sample(std::move(label), std::move(tensors), {}, {group}));
  };
  const Tensor none;
  add("2-d, small", with_affine(random_tensor({2, 4}, t), t), 2);
  add("3-d without weight and bias, small", {random_tensor({1, 4, 3}, t), none, none}, 2);
  add("3-d", with_affine(random_tensor({2, 6, 5}, t), t), 3);
  add("4-d without weight and bias", {random_tensor({2, 4, 3, 3}, t), none, none}, 2);
  add("5-d", with_affine(random_tensor({1, 4, 2, 2, 3}, t), t), 4);
  add("one group", with_affine(random_tensor({2, 3, 4}, t), t), 1);
  add("channels_last", with_affine(channels_last({2, 6, 3, 4}, t), t), 3);
  add("transposed", with_affine(random_tensor({5, 4, 3}, t).transpose(0, 2), t), 2);
  add("offset", with_affine(random_tensor({3, 5, 7}, t).slice(0, 1).slice(1, 1).slice(2, 2), t), 2);
  add("zero-size batch", with_affine(random_tensor({0, 4, 3}, t), t), 2);
  add("large", with_affine(random_tensor({4, 32, 16, 16}, t), t), 8);
  if (is_reduced(t)) {
    add("mixed precision: float32 parameters", with_affine(random_tensor({2, 4, 5}, t), DType::Float32), 2);
  }
  return out;
}

std::vector<ErrorInput> group_norm_errors() {
  const Tensor none;
  return {
      make_error("channels not divisible by groups", {randn({2, 4, 3}), none, none}, typeid(ValueError),
                 {"native_group_norm", "divisible by num_groups", "num_groups=3"}, {}, {3}),
      make_error("weight of the wrong size", {randn({2, 4, 3}), randn({3}), none}, typeid(ValueError),
                 {"native_group_norm", "weight", "4", "3"}, {}, {2}),
      make_error("zero groups", {randn({2, 4, 3}), none, none}, typeid(ValueError),
                 {"native_group_norm", "num_groups must be positive", "0"}, {}, {0}),
      make_error("integer input", {tensor({1, 2, 3, 4}).reshape({1, 4}), none, none}, typeid(TypeError),
                 {"native_group_norm", "int64"}, {}, {2}),
  };
}

Tolerance channel_norm_tolerance(DType t) { return t == DType::Float32 ? Tolerance{1e-5, 1e-5} : default_tolerance(t); }

}  // namespace

ANATOMY_REGISTER_OPS(channel_norm) {
  std::vector<OpInfo> ops;

  OpInfo nbn;
  nbn.name = "native_batch_norm";
  nbn.family = OpFamily::NN;
  nbn.schemas = {"native_batch_norm"};
  nbn.dtypes = kFloat;
  nbn.differentiable = true;
  nbn.notes =
      "returns (out, save_mean, save_invstd), statistics in fp32 for fp16/bf16 inputs; eval returns the running "
      "statistics' mean and invstd";
  nbn.samples = batch_norm_samples;
  nbn.op = call_native_batch_norm;
  nbn.reference = batch_norm_ref;
  nbn.tolerance = channel_norm_tolerance;
  nbn.error_inputs = batch_norm_errors;
  ops.push_back(nbn);

  OpInfo bn = nbn;
  bn.name = "batch_norm";
  bn.schemas = {"batch_norm"};
  bn.notes = "training updates running_mean / running_var in place (unbiased variance); cudnn_enabled is ignored";
  bn.op = [](const SampleInput& s) {
    auto [rm, rv] = running_stats(s);
    return std::vector<Tensor>{anatomy::batch_norm(s.tensors[0], opt(s.tensors[1]), opt(s.tensors[2]), rm, rv,
                                                   call_of(s).training, kMomentum, kEps)};
  };
  bn.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{batch_norm_ref(in, s)[0]};
  };
  bn.bench_input = [](int64_t n) {
    return make_sample("bench", with_affine(randn({std::max<int64_t>(n / 4096, 2), 16, 16, 16}), DType::Float32), {},
                       {1, 0, 0});
  };
  ops.push_back(bn);

  OpInfo ngn;
  ngn.name = "native_group_norm";
  ngn.family = OpFamily::NN;
  ngn.schemas = {"native_group_norm"};
  ngn.dtypes = kFloat;
  ngn.differentiable = true;
  ngn.notes = "returns (out, mean, rstd) with mean and rstd of shape (N, group)";
  ngn.samples = group_norm_samples;
  ngn.op = call_native_group_norm;
  ngn.reference = group_norm_ref;
  ngn.tolerance = channel_norm_tolerance;
  ngn.error_inputs = group_norm_errors;
  ops.push_back(ngn);

  OpInfo gn = ngn;
  gn.name = "group_norm";
  gn.schemas = {"group_norm"};
  gn.notes = "statistics in fp64 on the CPU; channels_last in, channels_last out";
  gn.op = [](const SampleInput& s) {
    return std::vector<Tensor>{
        anatomy::group_norm(s.tensors[0], s.ints[0], opt(s.tensors[1]), opt(s.tensors[2]), kEps)};
  };
  gn.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{group_norm_ref(in, s)[0]};
  };
  gn.bench_input = [](int64_t n) {
    return make_sample("bench", with_affine(randn({std::max<int64_t>(n / 4096, 1), 16, 16, 16}), DType::Float32), {},
                       {4});
  };
  ops.push_back(gn);
  return ops;
}

}  // namespace anatomy::testing
