// Op-table entries: softmax, log_softmax, layer_norm (and native_layer_norm) and rms_norm.
#include <cmath>
#include <limits>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kFloat = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

SampleInput with_dim(std::string label, std::vector<Tensor> tensors, int64_t dim) {
  SampleInput s;
  s.label = std::move(label);
  s.tensors = std::move(tensors);
  s.ints = {dim};
  return s;
}

std::vector<SampleInput> softmax_samples(DType t) {
  std::vector<SampleInput> out;
  out.push_back(with_dim("last dim", {random_tensor({5, 7}, t)}, -1));
  out.push_back(with_dim("first dim", {random_tensor({5, 7}, t)}, 0));
  out.push_back(with_dim("middle dim", {random_tensor({3, 4, 5}, t)}, 1));
  out.push_back(with_dim("transposed", {random_tensor({7, 5}, t).t()}, 1));
  out.push_back(with_dim("offset", {random_tensor({6, 9}, t).slice(0, 1).slice(1, 2)}, 1));
  out.push_back(with_dim("expanded", {random_tensor({1, 7}, t).expand({5, 7})}, 0));
  out.push_back(with_dim("0-dim", {random_tensor({}, t)}, 0));
  out.push_back(with_dim("zero-size", {random_tensor({0, 3}, t)}, 1));
  out.push_back(with_dim("large", {random_tensor({257, 300}, t)}, 1));
  Domain wide;
  wide.low = -60;
  wide.high = 60;
  out.push_back(with_dim("wide range (needs the max subtracted)", {random_tensor({4, 9}, t, wide)}, 1));
  out.push_back(with_dim(
      "special values",
      {tensor(std::vector<double>{kNaN, 1.0, 2.0, -kInf, 0.0, 1.0, kInf, 2.0}, {2, 4}, DType::Float64).to(t)}, 1));
  return out;
}

// softmax (or log_softmax) of a along `dim`, in fp64.
RefTensor softmax_ref(const RefTensor& a, int64_t dim, bool log) {
  RefTensor r(a.shape, a.dtype);
  if (a.numel() == 0) return r;
  const int64_t nd = a.dim();
  const int64_t d = nd == 0 ? 0 : (dim < 0 ? dim + nd : dim);
  const int64_t n = nd == 0 ? 1 : a.shape[d];
  const int64_t stride = nd == 0 ? 1 : a.strides()[d];
  for (int64_t base = 0; base < a.numel(); ++base) {
    if (nd > 0 && (base / stride) % n != 0) continue;  // visit each line once, from its first element
    double m = -kInf;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, a.data[base + i * stride]);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(a.data[base + i * stride] - m);
    bool nan = std::isnan(s);
    for (int64_t i = 0; i < n; ++i) {
      const double x = a.data[base + i * stride];
      double v = log ? x - m - std::log(s) : std::exp(x - m) / s;
      r.data[base + i * stride] = nan || std::isnan(x) ? kNaN : v;
    }
  }
  return r;
}

OpInfo softmax_entry(bool log) {
  const std::string name = log ? "log_softmax" : "softmax";
  OpInfo info;
  info.name = name;
  info.family = OpFamily::NN;
  info.schemas = {name + ".int"};
  info.dtypes = kFloat;
  info.differentiable = true;
  info.notes = "the max is subtracted first; fp16/bf16 compute in fp32";
  info.samples = softmax_samples;
  info.op = [log](const SampleInput& s) {
    return std::vector<Tensor>{log ? anatomy::log_softmax(s.tensors[0], s.ints[0])
                                   : anatomy::softmax(s.tensors[0], s.ints[0])};
  };
  info.reference = [log](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{softmax_ref(in[0], s.ints[0], log)};
  };
  info.tolerance = [](DType t) { return t == DType::Float32 ? Tolerance{1e-6, 1e-5} : default_tolerance(t); };
  info.error_inputs = [name] {
    std::vector<ErrorInput> e;
    e.push_back({with_dim("dim out of range", {randn({2, 3})}, 2), &typeid(IndexError), {name, "2"}});
    e.push_back({with_dim("integer input", {tensor({1, 2, 3})}, 0), &typeid(TypeError), {name, "int64"}});
    return e;
  };
  info.bench_input = [](int64_t n) {
    SampleInput s = with_dim("bench", {randn({n / 1024, 1024})}, 1);
    return s;
  };
  return info;
}

// Normalization samples: input, weight, bias (an undefined tensor when absent); dims holds
// normalized_shape.
std::vector<SampleInput> norm_samples(DType t, bool with_bias) {
  std::vector<SampleInput> out;
  auto make = [&](std::string label, Tensor x, std::vector<int64_t> shape, bool affine) {
    SampleInput s;
    s.label = std::move(label);
    s.tensors = {std::move(x), affine ? random_tensor(shape, t) : Tensor(),
                 affine && with_bias ? random_tensor(shape, t) : Tensor()};
    s.dims = std::move(shape);
    out.push_back(std::move(s));
  };
  make("last dim", random_tensor({5, 7}, t), {7}, false);
  make("last dim affine", random_tensor({5, 7}, t), {7}, true);
  make("two dims affine", random_tensor({3, 4, 5}, t), {4, 5}, true);
  make("whole tensor", random_tensor({4, 6}, t), {4, 6}, false);
  make("transposed", random_tensor({7, 5}, t).t(), {7}, true);
  make("offset", random_tensor({6, 9}, t).slice(0, 1).slice(1, 2), {7}, false);
  Domain shifted;
  shifted.low = 1000;
  shifted.high = 1004;
  make("large common offset", random_tensor({3, 64}, t == DType::Float64 ? t : DType::Float32, shifted).to(t), {64},
       true);
  make("zero-size rows", random_tensor({0, 5}, t), {5}, true);
  make("large", random_tensor({257, 300}, t), {300}, true);
  return out;
}

struct RowStats {
  double mean, rstd;
};

// layer_norm's outputs per row: y, mean and rstd (fp64).
std::vector<RefTensor> layer_norm_ref(const std::vector<RefTensor>& in, const SampleInput& s, double eps) {
  const RefTensor& x = in[0];
  int64_t cols = 1;
  for (int64_t d : s.dims) cols *= d;
  std::vector<int64_t> stat_shape = x.shape;
  for (size_t i = 0; i < s.dims.size(); ++i) stat_shape[stat_shape.size() - 1 - i] = 1;
  RefTensor y(x.shape, x.dtype), mean(stat_shape, x.dtype), rstd(stat_shape, x.dtype);
  for (int64_t r = 0; r < mean.numel(); ++r) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < cols; ++i) m += x.data[r * cols + i];
    m /= static_cast<double>(cols);
    for (int64_t i = 0; i < cols; ++i) v += (x.data[r * cols + i] - m) * (x.data[r * cols + i] - m);
    const double rs = 1 / std::sqrt(v / static_cast<double>(cols) + eps);
    for (int64_t i = 0; i < cols; ++i) {
      double o = (x.data[r * cols + i] - m) * rs;
      if (in[1].defined) o *= in[1].data[i];
      if (in[2].defined) o += in[2].data[i];
      y.data[r * cols + i] = o;
    }
    mean.data[r] = m;
    rstd.data[r] = rs;
  }
  return {y, mean, rstd};
}

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

std::vector<ErrorInput> norm_errors(const std::string& name) {
  std::vector<ErrorInput> e;
  SampleInput shape;
  shape.label = "normalized_shape not trailing";
  shape.tensors = {randn({2, 3}), Tensor(), Tensor()};
  shape.dims = {2};
  e.push_back({shape, &typeid(ValueError), {name, "normalized_shape"}});
  SampleInput weight;
  weight.label = "weight of the wrong shape";
  weight.tensors = {randn({2, 3}), randn({4}), Tensor()};
  weight.dims = {3};
  e.push_back({weight, &typeid(ValueError), {name, "weight", "[4]"}});
  SampleInput ints;
  ints.label = "integer input";
  ints.tensors = {tensor({1, 2, 3}), Tensor(), Tensor()};
  ints.dims = {3};
  e.push_back({ints, &typeid(TypeError), {name, "int64"}});
  return e;
}

}  // namespace

ANATOMY_REGISTER_OPS(nn) {
  std::vector<OpInfo> ops;
  ops.push_back(softmax_entry(false));
  ops.push_back(softmax_entry(true));

  const double eps = 1e-5;
  OpInfo ln;
  ln.name = "layer_norm";
  ln.family = OpFamily::NN;
  ln.schemas = {"layer_norm"};
  ln.dtypes = kFloat;
  ln.differentiable = true;
  ln.notes = "statistics in fp64, two-pass variance";
  ln.samples = [](DType t) { return norm_samples(t, true); };
  ln.op = [eps](const SampleInput& s) {
    return std::vector<Tensor>{anatomy::layer_norm(s.tensors[0], s.dims, opt(s.tensors[1]), opt(s.tensors[2]), eps)};
  };
  ln.reference = [eps](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{layer_norm_ref(in, s, eps)[0]};
  };
  ln.tolerance = [](DType t) { return t == DType::Float32 ? Tolerance{1e-5, 1e-5} : default_tolerance(t); };
  ln.error_inputs = [] { return norm_errors("native_layer_norm"); };
  ln.bench_input = [](int64_t n) {
    SampleInput s;
    s.tensors = {randn({n / 1024, 1024}), Tensor(), Tensor()};
    s.dims = {1024};
    return s;
  };
  ops.push_back(ln);

  OpInfo nln = ln;
  nln.name = "native_layer_norm";
  nln.schemas = {"native_layer_norm"};
  nln.notes = "returns (out, mean, rstd); mean and rstd are shaped like the leading dims followed by ones";
  nln.op = [eps](const SampleInput& s) {
    auto [y, m, r] = anatomy::native_layer_norm(s.tensors[0], s.dims, opt(s.tensors[1]), opt(s.tensors[2]), eps);
    return std::vector<Tensor>{y, m, r};
  };
  nln.reference = [eps](const std::vector<RefTensor>& in, const SampleInput& s) { return layer_norm_ref(in, s, eps); };
  nln.bench_input = nullptr;
  ops.push_back(nln);

  OpInfo rms;
  rms.name = "rms_norm";
  rms.family = OpFamily::NN;
  rms.schemas = {"rms_norm"};
  rms.dtypes = kFloat;
  rms.differentiable = true;
  rms.notes = "eps defaults to the dtype's machine epsilon";
  rms.samples = [](DType t) { return norm_samples(t, false); };
  rms.op = [](const SampleInput& s) {
    return std::vector<Tensor>{anatomy::rms_norm(s.tensors[0], s.dims, opt(s.tensors[1]))};
  };
  rms.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& x = in[0];
    int64_t cols = 1;
    for (int64_t d : s.dims) cols *= d;
    const double eps = visit_dtype(x.dtype, "rms_norm", [&]<typename T>() {
      if constexpr (std::is_integral_v<T>) return 0.0;
      else return convert<double>(std::numeric_limits<T>::epsilon());
    });
    RefTensor y(x.shape, x.dtype);
    for (int64_t r = 0; cols > 0 && r < x.numel() / cols; ++r) {
      double sq = 0;
      for (int64_t i = 0; i < cols; ++i) sq += x.data[r * cols + i] * x.data[r * cols + i];
      const double rs = 1 / std::sqrt(sq / static_cast<double>(cols) + eps);
      for (int64_t i = 0; i < cols; ++i)
        y.data[r * cols + i] = x.data[r * cols + i] * rs * (in[1].defined ? in[1].data[i] : 1.0);
    }
    return std::vector<RefTensor>{y};
  };
  rms.tolerance = ln.tolerance;
  rms.error_inputs = [] { return norm_errors("rms_norm"); };
  ops.push_back(rms);
  return ops;
}

}  // namespace anatomy::testing
