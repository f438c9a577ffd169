// Op-table entries of the fused backward operators: _softmax_backward_data,
// _log_softmax_backward_data, native_layer_norm_backward and _rms_norm_backward. Each sample holds
// the gradient and what the forward saved (softmax's output; layer_norm's input, mean and rstd,
// computed here by the CPU forward in the sample's dtype), so the fp64 reference reads the same
// saved values as the operator.
#include <cmath>
#include <limits>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kFloat = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// The composites (CPU) round every intermediate to fp16 / bf16, and the parameter gradients add
// hundreds of rows of such rounded terms (a random walk of their roundings); the CUDA kernels
// compute in fp32 (tests/gpu/test_cuda_norm_backward.cpp holds them to tighter bounds).
Tolerance backward_tolerance(DType t) {
  switch (t) {
    case DType::Float16:
      return {5e-2, 2e-2};
    case DType::BFloat16:
      return {4e-1, 6e-2};
    case DType::Float32:
      return {1e-5, 1e-5};
    default:
      return default_tolerance(t);
  }
}

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

// ---- softmax and log_softmax: tensors {grad, output}, ints {dim} ----

std::vector<SampleInput> softmax_backward_samples(DType t, bool log) {
  std::vector<SampleInput> out;
  auto make = [&](std::string label, const Tensor& x, int64_t dim, const Tensor& g) {
    SampleInput s;
    s.label = std::move(label);
    s.tensors = {g, log ? log_softmax(x, dim) : softmax(x, dim)};
    s.ints = {dim};
    out.push_back(std::move(s));
  };
  auto same = [&](std::string label, std::vector<int64_t> shape, int64_t dim) {
    make(std::move(label), random_tensor(shape, t), dim, random_tensor(shape, t));
  };
  same("last dim", {5, 7}, -1);
  same("first dim", {5, 7}, 0);
  same("middle dim", {3, 4, 5}, 1);
  make("transposed", random_tensor({7, 5}, t).t(), 1, random_tensor({7, 5}, t).t());
  make("offset", random_tensor({6, 9}, t).slice(0, 1).slice(1, 2), 1, random_tensor({6, 9}, t).slice(1, 2).slice(0, 1));
  same("0-dim", {}, 0);
  same("zero-size", {0, 3}, 1);
  same("large", {257, 300}, 1);
  same("long rows", {2, 20000}, 1);
  return out;
}

// The reference along `dim`: y * (g - sum(g * y)), or g - exp(y) * sum(g).
RefTensor softmax_backward_ref(const RefTensor& g, const RefTensor& y, int64_t dim, bool log) {
  RefTensor r(y.shape, y.dtype);
  if (y.numel() == 0) return r;
  const int64_t nd = y.dim();
  const int64_t d = nd == 0 ? 0 : (dim < 0 ? dim + nd : dim);
  const int64_t n = nd == 0 ? 1 : y.shape[d];
  const int64_t stride = nd == 0 ? 1 : y.strides()[d];
  for (int64_t base = 0; base < y.numel(); ++base) {
    if (nd > 0 && (base / stride) % n != 0) continue;  // each line once, from its first element
    double s = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t e = base + i * stride;
      s += log ? g.data[e] : g.data[e] * y.data[e];
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t e = base + i * stride;
      r.data[e] = log ? g.data[e] - std::exp(y.data[e]) * s : y.data[e] * (g.data[e] - s);
    }
  }
  return r;
}

OpInfo softmax_backward_entry(bool log) {
  const std::string name = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  OpInfo info;
  info.name = name;
  info.family = OpFamily::NN;
  info.schemas = {name};
  info.dtypes = kFloat;
  info.notes =
      log ? "g - exp(y) * sum(g); the result has input_dtype" : "y * (g - sum(g * y)); the result has input_dtype";
  info.samples = [log](DType t) { return softmax_backward_samples(t, log); };
  info.op = [log](const SampleInput& s) {
    const Tensor& g = s.tensors[0];
    const Tensor& y = s.tensors[1];
    return std::vector<Tensor>{log ? anatomy::_log_softmax_backward_data(g, y, s.ints[0], y.dtype())
                                   : anatomy::_softmax_backward_data(g, y, s.ints[0], y.dtype())};
  };
  info.reference = [log](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{softmax_backward_ref(in[0], in[1], s.ints[0], log)};
  };
  info.tolerance = backward_tolerance;
  info.error_inputs = [name] {
    std::vector<ErrorInput> e;
    auto sample = [](std::string label, Tensor g, Tensor y, int64_t dim) {
      SampleInput s;
      s.label = std::move(label);
      s.tensors = {std::move(g), std::move(y)};
      s.ints = {dim};
      return s;
    };
    e.push_back({sample("dim out of range", randn({2, 3}), randn({2, 3}), 2), &typeid(IndexError), {name, "2"}});
    e.push_back(
        {sample("shapes differ", randn({2, 4}), randn({2, 3}), 1), &typeid(ValueError), {name, "[2, 4]", "[2, 3]"}});
    e.push_back(
        {sample("dtypes differ", randn({2, 3}, DType::Float64), randn({2, 3}), 1), &typeid(TypeError), {name, "fp64"}});
    e.push_back(
        {sample("integer output", tensor({1, 2, 3}), tensor({1, 2, 3}), 0), &typeid(TypeError), {name, "int64"}});
    return e;
  };
  return info;
}

// ---- layer_norm and rms_norm: tensors {grad, input, weight, mean, rstd}, dims
// normalized_shape, ints output_mask ----

std::vector<SampleInput> norm_backward_samples(DType t, bool rms) {
  std::vector<SampleInput> out;
  auto make = [&](std::string label, const Tensor& x, std::vector<int64_t> shape, bool affine,
                  std::vector<int64_t> mask) {
    SampleInput s;
    s.label = std::move(label);
    const Tensor w = affine ? random_tensor(shape, t) : Tensor();
    Tensor mean, rstd;
    if (!rms) std::tie(std::ignore, mean, rstd) = native_layer_norm(x, shape, std::nullopt, std::nullopt, 1e-5);
    s.tensors = {random_tensor(x.sizes().vec(), t), x, w, mean, rstd};
    s.dims = std::move(shape);
    s.ints = std::move(mask);
    out.push_back(std::move(s));
  };
  const std::vector<int64_t> all = rms ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{1, 1, 1};
  make("last dim", random_tensor({5, 7}, t), {7}, false, all);
  make("last dim affine", random_tensor({5, 7}, t), {7}, true, all);
  make("two dims affine", random_tensor({3, 4, 5}, t), {4, 5}, true, all);
  make("whole tensor", random_tensor({4, 6}, t), {4, 6}, true, all);
  make("transposed", random_tensor({7, 5}, t).t(), {7}, true, all);
  make("offset", random_tensor({6, 9}, t).slice(0, 1).slice(1, 2), {7}, true, all);
  make("zero-size rows", random_tensor({0, 5}, t), {5}, true, all);
  make("large", random_tensor({257, 300}, t), {300}, true, all);
  make("long rows", random_tensor({3, 20000}, t), {20000}, true, all);
  make("input gradient only", random_tensor({9, 33}, t), {33}, true,
       rms ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{1, 0, 0});
  make("parameter gradients only", random_tensor({9, 33}, t), {33}, true,
       rms ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0, 1, 1});
  return out;
}

// dx, dw and db (as the mask and weight ask) from the given statistics (layer_norm) or
// recomputed ones (rms_norm, eps: the dtype's machine epsilon), in fp64.
std::vector<RefTensor> norm_backward_ref(const std::vector<RefTensor>& in, const SampleInput& s, bool rms) {
  const RefTensor &g = in[0], &x = in[1], &w = in[2];
  int64_t cols = 1;
  for (int64_t d : s.dims) cols *= d;
  const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
  const double eps = visit_dtype(x.dtype, "norm_backward_ref", [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) return 0.0;
    else return convert<double>(std::numeric_limits<T>::epsilon());
  });
  RefTensor dx(x.shape, x.dtype), dw(s.dims, x.dtype), db(s.dims, x.dtype);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x.data.data() + r * cols;
    const double* gr = g.data.data() + r * cols;
    double shift = 0, rstd;
    if (rms) {
      double q = 0;
      for (int64_t i = 0; i < cols; ++i) q += xr[i] * xr[i];
      rstd = 1 / std::sqrt(q / static_cast<double>(cols) + eps);
    } else {
      shift = in[3].data[r];
      rstd = in[4].data[r];
    }
    double sum_gw = 0, sum_gwx = 0;
    for (int64_t i = 0; i < cols; ++i) {
      const double gw = gr[i] * (w.defined ? w.data[i] : 1.0);
      sum_gw += gw;
      sum_gwx += gw * (xr[i] - shift) * rstd;
    }
    const double c1 = rms ? 0.0 : sum_gw / static_cast<double>(cols), c2 = sum_gwx / static_cast<double>(cols);
    for (int64_t i = 0; i < cols; ++i) {
      const double xhat = (xr[i] - shift) * rstd;
      const double gw = gr[i] * (w.defined ? w.data[i] : 1.0);
      dx.data[r * cols + i] = rstd * (gw - c1 - xhat * c2);
      dw.data[i] += gr[i] * xhat;
      db.data[i] += gr[i];
    }
  }
  std::vector<RefTensor> out;
  if (s.ints[0]) out.push_back(dx);
  if (s.ints[1] && w.defined) out.push_back(dw);
  if (!rms && s.ints[2]) out.push_back(db);
  return out;
}

std::vector<ErrorInput> norm_backward_errors(const std::string& name, bool rms) {
  std::vector<ErrorInput> e;
  auto sample = [&](std::string label, Tensor g, Tensor x, int64_t stats) {
    SampleInput s;
    s.label = std::move(label);
    s.tensors = {std::move(g), std::move(x), Tensor(), rms ? Tensor() : randn({stats, 1}),
                 rms ? Tensor() : randn({stats, 1})};
    s.dims = {3};
    s.ints = rms ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{1, 1, 1};
    return s;
  };
  e.push_back({sample("grad of another shape", randn({2, 4}), randn({2, 3}), 2),
               &typeid(ValueError),
               {name, "[2, 4]", "[2, 3]"}});
  e.push_back({sample("integer input", tensor({1, 2, 3}), tensor({1, 2, 3}), 1), &typeid(TypeError), {name, "int64"}});
  if (!rms)
    e.push_back(
        {sample("mean of the wrong size", randn({2, 3}), randn({2, 3}), 3), &typeid(ValueError), {name, "mean", "3"}});
  return e;
}

std::array<bool, 3> mask3(const std::vector<int64_t>& m) { return {m[0] != 0, m[1] != 0, m[2] != 0}; }
std::array<bool, 2> mask2(const std::vector<int64_t>& m) { return {m[0] != 0, m[1] != 0}; }

std::vector<Tensor> defined_only(std::initializer_list<Tensor> ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) {
    if (t.defined()) out.push_back(t);
  }
  return out;
}

}  // namespace

ANATOMY_REGISTER_OPS(nn_backward) {
  std::vector<OpInfo> ops;
  ops.push_back(softmax_backward_entry(false));
  ops.push_back(softmax_backward_entry(true));

  OpInfo ln;
  ln.name = "native_layer_norm_backward";
  ln.family = OpFamily::NN;
  ln.schemas = {"native_layer_norm_backward"};
  ln.dtypes = kFloat;
  ln.notes = "from the saved mean and rstd; a result is undefined where output_mask is 0";
  ln.samples = [](DType t) { return norm_backward_samples(t, false); };
  ln.op = [](const SampleInput& s) {
    const std::vector<Tensor>& t = s.tensors;
    auto [dx, dw, db] =
        anatomy::native_layer_norm_backward(t[0], t[1], s.dims, t[3], t[4], opt(t[2]), std::nullopt, mask3(s.ints));
    return defined_only({dx, dw, db});
  };
  ln.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) { return norm_backward_ref(in, s, false); };
  ln.tolerance = backward_tolerance;
  ln.error_inputs = [] { return norm_backward_errors("native_layer_norm_backward", false); };
  ops.push_back(ln);

  OpInfo rms = ln;
  rms.name = "_rms_norm_backward";
  rms.schemas = {"_rms_norm_backward"};
  rms.notes = "recomputes each row's rstd; eps defaults to the dtype's machine epsilon";
  rms.samples = [](DType t) { return norm_backward_samples(t, true); };
  rms.op = [](const SampleInput& s) {
    const std::vector<Tensor>& t = s.tensors;
    auto [dx, dw] = anatomy::_rms_norm_backward(t[0], t[1], s.dims, opt(t[2]), std::nullopt, mask2(s.ints));
    return defined_only({dx, dw});
  };
  rms.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) { return norm_backward_ref(in, s, true); };
  rms.error_inputs = [] { return norm_backward_errors("_rms_norm_backward", true); };
  ops.push_back(rms);
  return ops;
}

}  // namespace anatomy::testing
