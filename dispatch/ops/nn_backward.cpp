// The fused backward operators of softmax, log_softmax, layer_norm and rms_norm: schemas, the
// C++ functions, and the composite kernel every backend without its own falls back to (CPU,
// Meta). The composites are the derivative formulas of autograd/derivatives_nn.cpp written once
// more with public operators (the same arithmetic, so CPU gradients do not change when the
// formulas call these operators); CUDA has fused kernels (backends/cuda/norm/norm_backward_cuda.cpp).
// The derivatives call these operators only when no graph of the backward is recorded.
//
// output_mask is `int[N]` (0 or 1 each) where PyTorch's schema says `bool[3]`: the schema
// language has no bool lists. The C++ functions take std::array<bool, N>.
#include <limits>
#include <tuple>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/nn.h"
#include "anatomy/dispatch/ops/norm_backward_plan.h"

namespace anatomy {
namespace {

using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using Tensor2 = std::tuple<Tensor, Tensor>;

Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : t.to(d); }

// softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g).
template <bool Log>
Tensor softmax_backward_composite(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype) {
  SoftmaxBackwardPlan p = prepare_softmax_backward(Log ? "_log_softmax_backward_data" : "_softmax_backward_data",
                                                   grad_output, output, dim, input_dtype, false);
  const Tensor& g = grad_output;
  const Tensor& y = output;
  // No elements: an empty gradient, without the sums over the dim, whose keepdim result of an
  // empty softmax dim would have every other dim's elements (2^62 of them for a (0, 2^62) input).
  if (y.numel() == 0) return as_dtype(g.clone(), input_dtype);
  if constexpr (Log) return as_dtype(g - y.exp() * g.sum({p.dim}, true), input_dtype);
  else return as_dtype(y * (g - (g * y).sum({p.dim}, true)), input_dtype);
}

// xhat = (x - mean) * rstd; dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * w;
// dw = sum over the leading dims of g * xhat; db = sum of g.
Tensor3 native_layer_norm_backward_composite(const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
                                             const Tensor& mean, const Tensor& rstd,
                                             const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                                             IntArrayRef output_mask) {
  const char* op = "native_layer_norm_backward";
  check_output_mask(op, output_mask, 3);
  ANATOMY_CHECK(mean.defined() && rstd.defined(), ValueError, "{}: mean and rstd must be defined", op);
  NormBackwardPlan p = prepare_norm_backward(op, grad_out, input, normalized_shape, mean, rstd, weight, bias, false);
  const NormDims d = norm_dims(input.dim(), normalized_shape.size());
  const Tensor m = mean.reshape(p.rows.stat_shape), r = rstd.reshape(p.rows.stat_shape);
  const Tensor xhat = (input - m) * r;
  const Tensor& g = grad_out;
  const bool has_weight = weight && weight->defined();
  Tensor dx, dw, db;
  if (output_mask[0]) {
    const Tensor gw = has_weight ? g * *weight : g;
    dx = as_dtype(r * (gw - gw.mean(d.normalized, true) - xhat * (gw * xhat).mean(d.normalized, true)), input.dtype());
  }
  if (output_mask[1] && has_weight) dw = sum_leading(g * xhat, d);
  if (output_mask[2]) db = sum_leading(g, d);
  return {dx, dw, db};
}

// The default eps of rms_norm: the input dtype's machine epsilon, as in PyTorch.
double rms_norm_eps(DType t, std::optional<double> eps, const char* op) {
  double e = 0;
  visit_dtype(t, op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T> || is_reduced_float_v<T>) {
      e = eps ? *eps : convert<double>(std::numeric_limits<T>::epsilon());
    }
  });
  return e;
}

// r = rsqrt(mean(x^2) + eps), xhat = x r: dx = r * (gw - xhat * mean(gw * xhat)), gw = g * w;
// dw = sum over the leading dims of g * xhat.
Tensor2 rms_norm_backward_composite(const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
                                    const std::optional<Tensor>& weight, std::optional<double> eps,
                                    IntArrayRef output_mask) {
  const char* op = "_rms_norm_backward";
  check_output_mask(op, output_mask, 2);
  prepare_norm_backward(op, grad_out, input, normalized_shape, Tensor(), Tensor(), weight, std::nullopt, false);
  const NormDims d = norm_dims(input.dim(), normalized_shape.size());
  const double e = rms_norm_eps(input.dtype(), eps, op);
  const Tensor& x = input;
  const Tensor& g = grad_out;
  const Tensor r = ((x * x).mean(d.normalized, true) + e).rsqrt();
  const Tensor xhat = x * r;
  const bool has_weight = weight && weight->defined();
  Tensor dx, dw;
  if (output_mask[0]) {
    const Tensor gw = has_weight ? g * *weight : g;
    dx = as_dtype(r * (gw - xhat * (gw * xhat).mean(d.normalized, true)), input.dtype());
  }
  if (output_mask[1] && has_weight) dw = sum_leading(g * xhat, d);
  return {dx, dw};
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor");
  m.def("_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor");
  m.def(
      "native_layer_norm_backward(Tensor grad_out, Tensor input, int[] normalized_shape, Tensor mean, Tensor rstd, "
      "Tensor? weight, Tensor? bias, int[3] output_mask) -> (Tensor, Tensor, Tensor)");
  m.def(
      "_rms_norm_backward(Tensor grad_out, Tensor input, int[] normalized_shape, Tensor? weight, float? eps, "
      "int[2] output_mask) -> (Tensor, Tensor)");
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("_softmax_backward_data",
         dispatch::named_kernel(&softmax_backward_composite<false>, "softmax_backward_composite"));
  m.impl("_log_softmax_backward_data",
         dispatch::named_kernel(&softmax_backward_composite<true>, "log_softmax_backward_composite"));
  m.impl("native_layer_norm_backward", ANATOMY_KERNEL(native_layer_norm_backward_composite));
  m.impl("_rms_norm_backward", ANATOMY_KERNEL(rms_norm_backward_composite));
}

namespace {
template <size_t N>
std::vector<int64_t> mask_ints(const std::array<bool, N>& mask) {
  return std::vector<int64_t>(mask.begin(), mask.end());
}
}  // namespace

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype) {
  ANATOMY_OP(op, "aten::_softmax_backward_data", Tensor(const Tensor&, const Tensor&, int64_t, DType));
  return op.call(grad_output, output, dim, input_dtype);
}
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype) {
  ANATOMY_OP(op, "aten::_log_softmax_backward_data", Tensor(const Tensor&, const Tensor&, int64_t, DType));
  return op.call(grad_output, output, dim, input_dtype);
}
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& weight,
                                                              const std::optional<Tensor>& bias,
                                                              std::array<bool, 3> output_mask) {
  ANATOMY_OP(op, "aten::native_layer_norm_backward",
             Tensor3(const Tensor&, const Tensor&, IntArrayRef, const Tensor&, const Tensor&,
                     const std::optional<Tensor>&, const std::optional<Tensor>&, IntArrayRef));
  const std::vector<int64_t> mask = mask_ints(output_mask);
  return op.call(grad_out, input, normalized_shape, mean, rstd, weight, bias, mask);
}
std::tuple<Tensor, Tensor> _rms_norm_backward(const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
                                              const std::optional<Tensor>& weight, std::optional<double> eps,
                                              std::array<bool, 2> output_mask) {
  ANATOMY_OP(op, "aten::_rms_norm_backward",
             Tensor2(const Tensor&, const Tensor&, IntArrayRef, const std::optional<Tensor>&, std::optional<double>,
                     IntArrayRef));
  const std::vector<int64_t> mask = mask_ints(output_mask);
  return op.call(grad_out, input, normalized_shape, weight, eps, mask);
}

}  // namespace anatomy
