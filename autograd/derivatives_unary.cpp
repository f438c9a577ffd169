// Derivatives of the element-wise unary operators: neg, exp, log, tanh, sigmoid, relu, sqrt,
// sin, cos, sinh, cosh, abs, reciprocal, exp2, expm1, log1p, log2, rsqrt, tan, erf, gelu, silu,
// softplus, the rounding ops (zero gradient, as PyTorch), clamp and nan_to_num, functional and in-place.
// PyTorch's formulas (derivatives.yaml), written with public operators so they differentiate
// again.
#include <cmath>

#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"

namespace anatomy::autograd {
namespace {

using UnarySig = Tensor(const Tensor&);
using GeluSig = Tensor(const Tensor&, std::string_view);
using SoftplusSig = Tensor(const Tensor&, const Scalar&, const Scalar&);
using ClampSig = Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&);
using ClampTensorSig = Tensor(const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&);
using NanToNumSig = Tensor(const Tensor&, std::optional<double>, std::optional<double>, std::optional<double>);

constexpr double kLn2 = 0.693147180559945309417;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;  // 2 / sqrt(pi): erf's slope at 0
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // the standard normal pdf at 0

// ---- one expression of the input or the result ----
#define ANATOMY_UNARY_FORMULA(fn, body)                            \
  variable_list fn(BackwardContext& ctx, const variable_list& g) { \
    variable_list out = ctx.grads();                               \
    ctx.set(out, 0, body);                                         \
    return out;                                                    \
  }
ANATOMY_UNARY_FORMULA(neg_backward, -g[0])
ANATOMY_UNARY_FORMULA(exp_backward, g[0] * ctx.output(0))
ANATOMY_UNARY_FORMULA(log_backward, g[0] / ctx.input(0))
ANATOMY_UNARY_FORMULA(tanh_backward, g[0] * (1 - ctx.output(0) * ctx.output(0)))
ANATOMY_UNARY_FORMULA(sigmoid_backward, g[0] * ctx.output(0) * (1 - ctx.output(0)))
// PyTorch's ReluBackward0: the gradient where the output is positive, 0 elsewhere (a NaN
// gradient included), in one threshold_backward kernel.
ANATOMY_UNARY_FORMULA(relu_backward, threshold_backward(g[0], ctx.output(0), 0))
ANATOMY_UNARY_FORMULA(sqrt_backward, g[0] / (2 * ctx.output(0)))
ANATOMY_UNARY_FORMULA(sin_backward, g[0] * ctx.input(0).cos())
ANATOMY_UNARY_FORMULA(cos_backward, -g[0] * ctx.input(0).sin())
ANATOMY_UNARY_FORMULA(sinh_backward, g[0] * ctx.input(0).cosh())
ANATOMY_UNARY_FORMULA(cosh_backward, g[0] * ctx.input(0).sinh())
ANATOMY_UNARY_FORMULA(abs_backward, g[0] * ctx.input(0).sign())
ANATOMY_UNARY_FORMULA(reciprocal_backward, -g[0] * ctx.output(0) * ctx.output(0))
ANATOMY_UNARY_FORMULA(exp2_backward, g[0] * ctx.output(0) * kLn2)
ANATOMY_UNARY_FORMULA(expm1_backward, g[0] * (ctx.output(0) + 1))
ANATOMY_UNARY_FORMULA(log1p_backward, g[0] / (ctx.input(0) + 1))
ANATOMY_UNARY_FORMULA(log2_backward, g[0] / (ctx.input(0) * kLn2))
ANATOMY_UNARY_FORMULA(rsqrt_backward, g[0] * ctx.output(0).pow(3) * -0.5)
ANATOMY_UNARY_FORMULA(tan_backward, g[0] * (ctx.output(0) * ctx.output(0) + 1))
ANATOMY_UNARY_FORMULA(erf_backward, g[0] * (-(ctx.input(0) * ctx.input(0))).exp() * kTwoOverSqrtPi)
ANATOMY_UNARY_FORMULA(nan_to_num_backward, g[0] * ctx.input(0).isfinite().to(g[0].dtype()))
// sign, floor, ceil, round, trunc: piecewise constant.
ANATOMY_UNARY_FORMULA(zero_backward, zeros_like(g[0]))
#undef ANATOMY_UNARY_FORMULA

// silu(x) = x * sigmoid(x): sigmoid(x) * (1 + x * (1 - sigmoid(x))).
variable_list silu_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  const Tensor s = x.sigmoid();
  ctx.set(out, 0, g[0] * s * (x * (1 - s) + 1));
  return out;
}

// gelu: x * Phi(x) ("none"), or PyTorch's tanh approximation ("tanh").
variable_list gelu_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  if (ctx.arg<std::string>(1) == "tanh") {
    ctx.set(out, 0, gelu_tanh_grad(g[0], x));
  } else {
    const Tensor cdf = ((x * kInvSqrt2).erf() + 1) * 0.5;
    const Tensor pdf = (x * x * -0.5).exp() * kInvSqrt2Pi;
    ctx.set(out, 0, g[0] * (cdf + x * pdf));
  }
  return out;
}

// softplus(x) = log(1 + exp(beta x)) / beta, and x where beta x > threshold.
variable_list softplus_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor bx = ctx.input(0) * ctx.arg<Scalar>(1).to_double();
  ctx.set(out, 0, where(bx > ctx.arg<Scalar>(2), g[0], g[0] * bx.sigmoid()));
  return out;
}

// clamp: the gradient passes where min <= x <= max (PyTorch's clamp_backward).
variable_list clamp_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  const bool has_min = !ctx.is_none(1), has_max = !ctx.is_none(2);
  Tensor pass;
  if (has_min && has_max) {
    pass = logical_and(x >= ctx.arg<Scalar>(1), x <= ctx.arg<Scalar>(2));
  } else if (has_min) {
    pass = x >= ctx.arg<Scalar>(1);
  } else if (has_max) {
    pass = x <= ctx.arg<Scalar>(2);
  }
  ctx.set(out, 0, pass.defined() ? where(pass, g[0], Scalar(0)) : g[0]);
  return out;
}

// clamp.Tensor: PyTorch's clamp_backward_min_max. Where min > max the result is max, so max
// gets the gradient and min none.
variable_list clamp_tensor_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0), lo = ctx.input(1), hi = ctx.input(2);
  if (lo.defined() && hi.defined()) {
    if (ctx.needs_grad(0))
      ctx.set(out, 0, grad_for_input(ctx, 0, where(logical_and(x >= lo, x <= hi), g[0], Scalar(0))));
    if (ctx.needs_grad(1))
      ctx.set(out, 1, grad_for_input(ctx, 1, where(logical_and(x < lo, lo < hi), g[0], Scalar(0))));
    if (ctx.needs_grad(2)) ctx.set(out, 2, grad_for_input(ctx, 2, where(logical_or(x > hi, hi < lo), g[0], Scalar(0))));
  } else if (lo.defined()) {
    if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, where(x >= lo, g[0], Scalar(0))));
    if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, where(x < lo, g[0], Scalar(0))));
  } else if (hi.defined()) {
    if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, where(x <= hi, g[0], Scalar(0))));
    if (ctx.needs_grad(2)) ctx.set(out, 2, grad_for_input(ctx, 2, where(x > hi, g[0], Scalar(0))));
  } else if (ctx.needs_grad(0)) {
    ctx.set(out, 0, grad_for_input(ctx, 0, g[0]));
  }
  return out;
}

constexpr uint32_t kSelf = args_mask({0});
constexpr uint32_t kResult = args_mask({0});  // output 0

// The functional and the in-place entry of one op share the node name and the formula.
#define ANATOMY_UNARY_ENTRIES(op, Name, save_args, save_outputs, fn)              \
  const DerivativeEntry k_##op{"aten::" #op, Name, save_args, save_outputs, &fn}; \
  const DerivativeEntry k_##op##_{"aten::" #op "_", Name, save_args, save_outputs, &fn};
ANATOMY_UNARY_ENTRIES(neg, "NegBackward0", 0, 0, neg_backward)
ANATOMY_UNARY_ENTRIES(exp, "ExpBackward0", 0, kResult, exp_backward)
ANATOMY_UNARY_ENTRIES(log, "LogBackward0", kSelf, 0, log_backward)
ANATOMY_UNARY_ENTRIES(tanh, "TanhBackward0", 0, kResult, tanh_backward)
ANATOMY_UNARY_ENTRIES(sigmoid, "SigmoidBackward0", 0, kResult, sigmoid_backward)
ANATOMY_UNARY_ENTRIES(relu, "ReluBackward0", 0, kResult, relu_backward)
ANATOMY_UNARY_ENTRIES(sqrt, "SqrtBackward0", 0, kResult, sqrt_backward)
ANATOMY_UNARY_ENTRIES(sin, "SinBackward0", kSelf, 0, sin_backward)
ANATOMY_UNARY_ENTRIES(cos, "CosBackward0", kSelf, 0, cos_backward)
ANATOMY_UNARY_ENTRIES(sinh, "SinhBackward0", kSelf, 0, sinh_backward)
ANATOMY_UNARY_ENTRIES(cosh, "CoshBackward0", kSelf, 0, cosh_backward)
ANATOMY_UNARY_ENTRIES(abs, "AbsBackward0", kSelf, 0, abs_backward)
ANATOMY_UNARY_ENTRIES(reciprocal, "ReciprocalBackward0", 0, kResult, reciprocal_backward)
ANATOMY_UNARY_ENTRIES(exp2, "Exp2Backward0", 0, kResult, exp2_backward)
ANATOMY_UNARY_ENTRIES(expm1, "Expm1Backward0", 0, kResult, expm1_backward)
ANATOMY_UNARY_ENTRIES(log1p, "Log1PBackward0", kSelf, 0, log1p_backward)
ANATOMY_UNARY_ENTRIES(log2, "Log2Backward0", kSelf, 0, log2_backward)
ANATOMY_UNARY_ENTRIES(rsqrt, "RsqrtBackward0", 0, kResult, rsqrt_backward)
ANATOMY_UNARY_ENTRIES(tan, "TanBackward0", 0, kResult, tan_backward)
ANATOMY_UNARY_ENTRIES(erf, "ErfBackward0", kSelf, 0, erf_backward)
ANATOMY_UNARY_ENTRIES(silu, "SiluBackward0", kSelf, 0, silu_backward)
ANATOMY_UNARY_ENTRIES(sign, "SignBackward0", 0, 0, zero_backward)
ANATOMY_UNARY_ENTRIES(floor, "FloorBackward0", 0, 0, zero_backward)
ANATOMY_UNARY_ENTRIES(ceil, "CeilBackward0", 0, 0, zero_backward)
ANATOMY_UNARY_ENTRIES(round, "RoundBackward0", 0, 0, zero_backward)
ANATOMY_UNARY_ENTRIES(trunc, "TruncBackward0", 0, 0, zero_backward)
ANATOMY_UNARY_ENTRIES(gelu, "GeluBackward0", kSelf, 0, gelu_backward)
ANATOMY_UNARY_ENTRIES(clamp, "ClampBackward1", kSelf, 0, clamp_backward)
ANATOMY_UNARY_ENTRIES(nan_to_num, "NanToNumBackward0", kSelf, 0, nan_to_num_backward)
#undef ANATOMY_UNARY_ENTRIES
const DerivativeEntry kSoftplus{"aten::softplus", "SoftplusBackward0", kSelf, 0, &softplus_backward};
const DerivativeEntry kClampTensor{"aten::clamp.Tensor", "ClampBackward0", args_mask({0, 1, 2}), 0,
                                   &clamp_tensor_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
#define ANATOMY_UNARY_REGISTER(op, Sig)      \
  register_derivative<&k_##op, Sig>(m, #op); \
  register_derivative<&k_##op##_, Sig>(m, #op "_");
  ANATOMY_UNARY_REGISTER(neg, UnarySig)
  ANATOMY_UNARY_REGISTER(exp, UnarySig)
  ANATOMY_UNARY_REGISTER(log, UnarySig)
  ANATOMY_UNARY_REGISTER(tanh, UnarySig)
  ANATOMY_UNARY_REGISTER(sigmoid, UnarySig)
  ANATOMY_UNARY_REGISTER(relu, UnarySig)
  ANATOMY_UNARY_REGISTER(sqrt, UnarySig)
  ANATOMY_UNARY_REGISTER(sin, UnarySig)
  ANATOMY_UNARY_REGISTER(cos, UnarySig)
  ANATOMY_UNARY_REGISTER(sinh, UnarySig)
  ANATOMY_UNARY_REGISTER(cosh, UnarySig)
  ANATOMY_UNARY_REGISTER(abs, UnarySig)
  ANATOMY_UNARY_REGISTER(reciprocal, UnarySig)
  ANATOMY_UNARY_REGISTER(exp2, UnarySig)
  ANATOMY_UNARY_REGISTER(expm1, UnarySig)
  ANATOMY_UNARY_REGISTER(log1p, UnarySig)
  ANATOMY_UNARY_REGISTER(log2, UnarySig)
  ANATOMY_UNARY_REGISTER(rsqrt, UnarySig)
  ANATOMY_UNARY_REGISTER(tan, UnarySig)
  ANATOMY_UNARY_REGISTER(erf, UnarySig)
  ANATOMY_UNARY_REGISTER(silu, UnarySig)
  ANATOMY_UNARY_REGISTER(sign, UnarySig)
  ANATOMY_UNARY_REGISTER(floor, UnarySig)
  ANATOMY_UNARY_REGISTER(ceil, UnarySig)
  ANATOMY_UNARY_REGISTER(round, UnarySig)
  ANATOMY_UNARY_REGISTER(trunc, UnarySig)
  ANATOMY_UNARY_REGISTER(gelu, GeluSig)
  ANATOMY_UNARY_REGISTER(clamp, ClampSig)
  ANATOMY_UNARY_REGISTER(nan_to_num, NanToNumSig)
#undef ANATOMY_UNARY_REGISTER
  register_derivative<&kSoftplus, SoftplusSig>(m, "softplus");
  register_derivative<&kClampTensor, ClampTensorSig>(m, "clamp.Tensor");
}

}  // namespace anatomy::autograd
