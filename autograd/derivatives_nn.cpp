// Derivatives of the neural-network functions: softmax, log_softmax, native_layer_norm,
// rms_norm and native_dropout. layer_norm and dropout are composites over native_layer_norm and
// native_dropout.
//
// Note [Fused backward unless create_graph]
//   The backward passes of softmax, log_softmax, native_layer_norm and rms_norm are written
//   twice: with public operators here, which are differentiable again (double backward needs no
//   extra formulas), and as the operators _softmax_backward_data, _log_softmax_backward_data,
//   native_layer_norm_backward and _rms_norm_backward (dispatch/ops/nn_backward.cpp), whose CUDA
//   kernels read each row once. The engine runs a backward with grad mode on only when it
//   records a graph of it (create_graph); otherwise the formulas call the operators, whose
//   composite (CPU, Meta) is the same arithmetic as the formulas below.
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/ops/nn.h"
#include "anatomy/dispatch/ops/norm_backward_plan.h"

namespace anatomy::autograd {
namespace {

using SoftmaxSig = Tensor(const Tensor&, int64_t, std::optional<DType>);
using LayerNormSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, IntArrayRef, const std::optional<Tensor>&,
                                                        const std::optional<Tensor>&, double);
using RmsNormSig = Tensor(const Tensor&, IntArrayRef, const std::optional<Tensor>&, std::optional<double>);
using DropoutSig = std::tuple<Tensor, Tensor>(const Tensor&, double, bool);

Tensor to_input_dtype(const BackwardContext& ctx, const Tensor& g) {
  return g.dtype() == ctx.input_dtype(0) ? g : g.to(ctx.input_dtype(0));
}

// Whether the fused operator may take grad `g` of a result like `like` (Note [Fused backward
// unless create_graph]): no graph is recorded, and g matches the result as the operators ask.
bool use_fused(const Tensor& g, const Tensor& like) {
  return !GradMode::is_enabled() && g.sizes() == like.sizes() && g.dtype() == like.dtype() &&
         g.device() == like.device();
}

// softmax: y * (g - sum(g * y)); the result may have the `dtype` argument's type.
variable_list softmax_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor y = ctx.output(0);
  const int64_t dim = ctx.arg<int64_t>(1);
  if (use_fused(g[0], y)) ctx.set(out, 0, _softmax_backward_data(g[0], y, dim, ctx.input_dtype(0)));
  else ctx.set(out, 0, to_input_dtype(ctx, y * (g[0] - (g[0] * y).sum({dim}, true))));
  return out;
}
// log_softmax: g - exp(y) * sum(g).
variable_list log_softmax_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor y = ctx.output(0);
  const int64_t dim = ctx.arg<int64_t>(1);
  if (use_fused(g[0], y)) ctx.set(out, 0, _log_softmax_backward_data(g[0], y, dim, ctx.input_dtype(0)));
  else ctx.set(out, 0, to_input_dtype(ctx, g[0] - y.exp() * g[0].sum({dim}, true)));
  return out;
}

std::optional<Tensor> optional_input(const BackwardContext& ctx, int arg) {
  const Tensor t = ctx.input(arg);
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}

// Given xhat = (x - mean) * rstd and y = xhat * w + b over the normalized dims:
//   dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * w
//   dw = sum over the leading dims of g * xhat, db = sum of g.
// The first backward uses the saved mean and rstd. Under create_graph they are recomputed
// from the input, so the second derivative sees how they depend on it.
variable_list native_layer_norm_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  const std::vector<int64_t>& normalized_shape = ctx.arg<std::vector<int64_t>>(1);
  const NormDims d = norm_dims(x.dim(), normalized_shape.size());
  if (use_fused(g[0], x)) {
    const Tensor mean = ctx.output(1), rstd = ctx.output(2);
    auto [dx, dw, db] =
        anatomy::native_layer_norm_backward(g[0], x, normalized_shape, mean, rstd, optional_input(ctx, 2), std::nullopt,
                                            {ctx.needs_grad(0), ctx.needs_grad(2), ctx.needs_grad(3)});
    if (ctx.needs_grad(0)) {
      // The mean and rstd outputs' gradients, when some arrived (see below).
      if (!ctx.grad_zero_filled(1) || !ctx.grad_zero_filled(2)) {
        double n = 1;
        for (int64_t dim : d.normalized) n *= static_cast<double>(x.size(dim));
        const Tensor g_mean = g[1].reshape(mean.sizes()), g_rstd = g[2].reshape(rstd.sizes());
        dx = dx + (g_mean - g_rstd * rstd.pow(3) * (x - mean)) / n;
      }
      ctx.set(out, 0, grad_for_input(ctx, 0, dx));
    }
    if (ctx.needs_grad(2)) ctx.set(out, 2, grad_for_input(ctx, 2, dw));
    if (ctx.needs_grad(3)) ctx.set(out, 3, grad_for_input(ctx, 3, db));
    return out;
  }
  Tensor mean, rstd;
  if (GradMode::is_enabled()) {
    mean = x.mean(d.normalized, true);
    rstd = (x.var(d.normalized, 0, true) + ctx.arg<double>(4)).rsqrt();
  } else {
    mean = ctx.output(1);
    rstd = ctx.output(2);
  }
  const Tensor xhat = (x - mean) * rstd;
  const Tensor w = ctx.input(2);
  if (ctx.needs_grad(0)) {
    const Tensor gw = w.defined() ? g[0] * w : g[0];
    Tensor dx = rstd * (gw - gw.mean(d.normalized, true) - xhat * (gw * xhat).mean(d.normalized, true));
    // The mean and rstd outputs are differentiable too (PyTorch's formula drops their
    // gradients): d mean / dx = 1/N and d rstd / dx = -rstd^3 (x - mean) / N.
    double n = 1;
    for (int64_t dim : d.normalized) n *= static_cast<double>(x.size(dim));
    const Tensor g_mean = g[1].reshape(mean.sizes()), g_rstd = g[2].reshape(rstd.sizes());
    dx = dx + (g_mean - g_rstd * rstd.pow(3) * (x - mean)) / n;
    ctx.set(out, 0, grad_for_input(ctx, 0, dx));
  }
  if (ctx.needs_grad(2)) ctx.set(out, 2, grad_for_input(ctx, 2, sum_leading(g[0] * xhat, d)));
  if (ctx.needs_grad(3)) ctx.set(out, 3, grad_for_input(ctx, 3, sum_leading(g[0], d)));
  return out;
}

// The rms_norm kernel's default eps: the input dtype's machine epsilon, as in PyTorch.
double machine_epsilon(DType t) {
  switch (t) {
    case DType::Float64:
      return 2.220446049250313e-16;
    case DType::Float16:
      return 0.0009765625;
    case DType::BFloat16:
      return 0.0078125;
    default:
      return 1.1920928955078125e-07;
  }
}

// y = x * r * w, r = rsqrt(mean(x^2) + eps): dx = r * (gw - xhat * mean(gw * xhat)), xhat = x r.
variable_list rms_norm_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  const std::vector<int64_t>& normalized_shape = ctx.arg<std::vector<int64_t>>(1);
  const NormDims d = norm_dims(x.dim(), normalized_shape.size());
  if (use_fused(g[0], x)) {
    const std::optional<double> eps = ctx.is_none(3) ? std::nullopt : std::optional<double>(ctx.arg<double>(3));
    auto [dx, dw] = _rms_norm_backward(g[0], x, normalized_shape, optional_input(ctx, 2), eps,
                                       {ctx.needs_grad(0), ctx.needs_grad(2)});
    if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, dx));
    if (ctx.needs_grad(2)) ctx.set(out, 2, grad_for_input(ctx, 2, dw));
    return out;
  }
  const double eps = ctx.is_none(3) ? machine_epsilon(x.dtype()) : ctx.arg<double>(3);
  const Tensor r = ((x * x).mean(d.normalized, true) + eps).rsqrt();
  const Tensor xhat = x * r;
  const Tensor w = ctx.input(2);
  if (ctx.needs_grad(0)) {
    const Tensor gw = w.defined() ? g[0] * w : g[0];
    ctx.set(out, 0, grad_for_input(ctx, 0, r * (gw - xhat * (gw * xhat).mean(d.normalized, true))));
  }
  if (ctx.needs_grad(2)) ctx.set(out, 2, grad_for_input(ctx, 2, sum_leading(g[0] * xhat, d)));
  return out;
}

// native_dropout: the kept elements were scaled by 1 / (1 - p); the mask gets no gradient.
variable_list native_dropout_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const double p = ctx.arg<double>(1);
  const double scale = !ctx.arg<bool>(2) ? 1.0 : (p == 1 ? 0.0 : 1.0 / (1.0 - p));
  ctx.set(out, 0, g[0] * ctx.output(1).to(g[0].dtype()) * scale);
  return out;
}

const DerivativeEntry kSoftmax{"aten::softmax.int", "SoftmaxBackward0", 0, args_mask({0}), &softmax_backward};
const DerivativeEntry kLogSoftmax{"aten::log_softmax.int", "LogSoftmaxBackward0", 0, args_mask({0}),
                                  &log_softmax_backward};
const DerivativeEntry kNativeLayerNorm{"aten::native_layer_norm", "NativeLayerNormBackward0", args_mask({0, 2}),
                                       args_mask({1, 2}), &native_layer_norm_backward};
const DerivativeEntry kRmsNorm{"aten::rms_norm", "RmsNormBackward0", args_mask({0, 2}), 0, &rms_norm_backward};
// Output 1, the bool keep-mask, is saved (it gets no history of its own).
const DerivativeEntry kNativeDropout{"aten::native_dropout", "NativeDropoutBackward0", 0, args_mask({1}),
                                     &native_dropout_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  register_derivative<&kSoftmax, SoftmaxSig>(m, "softmax.int");
  register_derivative<&kLogSoftmax, SoftmaxSig>(m, "log_softmax.int");
  register_derivative<&kNativeLayerNorm, LayerNormSig>(m, "native_layer_norm");
  register_derivative<&kRmsNorm, RmsNormSig>(m, "rms_norm");
  register_derivative<&kNativeDropout, DropoutSig>(m, "native_dropout");
}

}  // namespace anatomy::autograd
