// Derivatives of the element-wise unary operators: neg, exp, log, tanh, sigmoid, relu, sqrt,
// sin, cos, sinh, cosh, abs, reciprocal, exp2, expm1, log1p, log2, rsqrt, tan, erf, gelu, silu,
// softplus, log10, square, frac, asin, acos, atan, asinh, acosh, atanh, lgamma, digamma,
// polygamma, erfc, erfinv, logit, mish, hardswish, hardsigmoid, leaky_relu, hardtanh, elu, selu,
// the rounding ops (zero gradient, as PyTorch), clamp and nan_to_num, functional and in-place.
// PyTorch's formulas (derivatives.yaml), written with public operators so they differentiate
// again.
#include <cmath>

#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/dispatch/ops/unary_rules.h"

namespace anatomy::autograd {
namespace {

using UnarySig = Tensor(const Tensor&);
using GeluSig = Tensor(const Tensor&, std::string_view);
using SoftplusSig = Tensor(const Tensor&, const Scalar&, const Scalar&);
using ClampSig = Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&);
using ClampTensorSig = Tensor(const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&);
using PolygammaSig = Tensor(int64_t, const Tensor&);
using PolygammaInplaceSig = Tensor(const Tensor&, int64_t);
using LogitSig = Tensor(const Tensor&, std::optional<double>);
using ScalarArgSig = Tensor(const Tensor&, const Scalar&);
using TwoScalarSig = Tensor(const Tensor&, const Scalar&, const Scalar&);
using EluSig = Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&);
using NanToNumSig = Tensor(const Tensor&, std::optional<double>, std::optional<double>, std::optional<double>);

constexpr double kLn2 = 0.693147180559945309417;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;  // 2 / sqrt(pi): erf's slope at 0
constexpr double kLn10 = 2.30258509299404568402;
constexpr double kSqrtPiOverTwo = 0.88622692545275801365;  // sqrt(pi) / 2: erfinv's slope at 0

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
ANATOMY_UNARY_FORMULA(log10_backward, g[0] / (ctx.input(0) * kLn10))
ANATOMY_UNARY_FORMULA(square_backward, g[0] * ctx.input(0) * 2)
ANATOMY_UNARY_FORMULA(frac_backward, g[0])
ANATOMY_UNARY_FORMULA(asin_backward, g[0] * (-ctx.input(0) * ctx.input(0) + 1).rsqrt())
ANATOMY_UNARY_FORMULA(acos_backward, -g[0] * (-ctx.input(0) * ctx.input(0) + 1).rsqrt())
ANATOMY_UNARY_FORMULA(atan_backward, g[0] / (ctx.input(0) * ctx.input(0) + 1))
ANATOMY_UNARY_FORMULA(asinh_backward, g[0] * (ctx.input(0) * ctx.input(0) + 1).rsqrt())
ANATOMY_UNARY_FORMULA(acosh_backward, g[0] * (ctx.input(0) * ctx.input(0) - 1).rsqrt())
ANATOMY_UNARY_FORMULA(atanh_backward, g[0] / (-ctx.input(0) * ctx.input(0) + 1))
ANATOMY_UNARY_FORMULA(lgamma_backward, g[0] * ctx.input(0).digamma())
ANATOMY_UNARY_FORMULA(digamma_backward, g[0] * ctx.input(0).polygamma(1))
ANATOMY_UNARY_FORMULA(erfc_backward, g[0] * (-(ctx.input(0) * ctx.input(0))).exp() * -kTwoOverSqrtPi)
ANATOMY_UNARY_FORMULA(erfinv_backward, g[0] * (ctx.output(0) * ctx.output(0)).exp() * kSqrtPiOverTwo)
// hardswish: 0 below -3, x / 3 + 1/2 up to 3, 1 above (PyTorch's hardswish_backward).
ANATOMY_UNARY_FORMULA(hardswish_backward, where(ctx.input(0) < -3, Scalar(0),
                                                where(ctx.input(0) <= 3, g[0] * (ctx.input(0) / 3 + 0.5), g[0])))
// hardsigmoid: 1/6 strictly between -3 and 3, 0 elsewhere.
ANATOMY_UNARY_FORMULA(hardsigmoid_backward,
                      where(logical_and(ctx.input(0) > -3, ctx.input(0) < 3), g[0] / 6, Scalar(0)))
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

// polygamma(n, x): polygamma(n + 1, x); self is argument 1 (argument 0 in the in-place form).
variable_list polygamma_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 1, g[0] * ctx.input(1).polygamma(ctx.arg<int64_t>(0) + 1));
  return out;
}
variable_list polygamma_inplace_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, g[0] * ctx.input(0).polygamma(ctx.arg<int64_t>(1) + 1));
  return out;
}

// logit: 1 / (x (1 - x)); with eps, 0 where x was clamped (outside [eps, 1 - eps]).
variable_list logit_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  const Tensor grad = g[0] / (x * (1 - x));
  if (ctx.is_none(1)) {
    ctx.set(out, 0, grad);
  } else {
    const double eps = ctx.arg<double>(1);
    ctx.set(out, 0, where(logical_or(x<eps, x> 1 - eps), Scalar(0), grad));
  }
  return out;
}

// mish(x) = x tanh(softplus(x)): tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2).
variable_list mish_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  const Tensor t = softplus(x).tanh();
  ctx.set(out, 0, g[0] * (t + x * x.sigmoid() * (1 - t * t)));
  return out;
}

// leaky_relu: 1 for x > 0, negative_slope elsewhere.
variable_list leaky_relu_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, where(ctx.input(0) > 0, g[0], g[0] * ctx.arg<Scalar>(1)));
  return out;
}

// hardtanh: the gradient strictly between the bounds, 0 at and beyond them (PyTorch's
// hardtanh_backward).
variable_list hardtanh_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  ctx.set(out, 0, where(logical_or(x <= ctx.arg<Scalar>(1), x >= ctx.arg<Scalar>(2)), Scalar(0), g[0]));
  return out;
}

// elu: scale for x > 0, input_scale * alpha * scale * exp(input_scale * x) elsewhere.
Tensor elu_grad(const Tensor& g, const Tensor& x, double alpha, double scale, double input_scale) {
  return where(x > 0, g * scale, g * (x * input_scale).exp() * (input_scale * alpha * scale));
}
variable_list elu_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0,
          elu_grad(g[0], ctx.input(0), ctx.arg<Scalar>(1).to_double(), ctx.arg<Scalar>(2).to_double(),
                   ctx.arg<Scalar>(3).to_double()));
  return out;
}
variable_list selu_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, elu_grad(g[0], ctx.input(0), kSeluAlpha, kSeluScale, 1));
  return out;
}

// gelu: x * Phi(x) ("none"), or PyTorch's tanh approximation ("tanh").
variable_list gelu_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, gelu_grad(g[0], ctx.input(0), ctx.arg<std::string>(1)));
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
ANATOMY_UNARY_ENTRIES(log10, "Log10Backward0", kSelf, 0, log10_backward)
ANATOMY_UNARY_ENTRIES(square, "PowBackward0", kSelf, 0, square_backward)
ANATOMY_UNARY_ENTRIES(frac, "FracBackward0", 0, 0, frac_backward)
ANATOMY_UNARY_ENTRIES(asin, "AsinBackward0", kSelf, 0, asin_backward)
ANATOMY_UNARY_ENTRIES(acos, "AcosBackward0", kSelf, 0, acos_backward)
ANATOMY_UNARY_ENTRIES(atan, "AtanBackward0", kSelf, 0, atan_backward)
ANATOMY_UNARY_ENTRIES(asinh, "AsinhBackward0", kSelf, 0, asinh_backward)
ANATOMY_UNARY_ENTRIES(acosh, "AcoshBackward0", kSelf, 0, acosh_backward)
ANATOMY_UNARY_ENTRIES(atanh, "AtanhBackward0", kSelf, 0, atanh_backward)
ANATOMY_UNARY_ENTRIES(lgamma, "LgammaBackward0", kSelf, 0, lgamma_backward)
ANATOMY_UNARY_ENTRIES(digamma, "DigammaBackward0", kSelf, 0, digamma_backward)
ANATOMY_UNARY_ENTRIES(erfc, "ErfcBackward0", kSelf, 0, erfc_backward)
ANATOMY_UNARY_ENTRIES(erfinv, "ErfinvBackward0", 0, kResult, erfinv_backward)
ANATOMY_UNARY_ENTRIES(mish, "MishBackward0", kSelf, 0, mish_backward)
ANATOMY_UNARY_ENTRIES(hardswish, "HardswishBackward0", kSelf, 0, hardswish_backward)
ANATOMY_UNARY_ENTRIES(hardsigmoid, "HardsigmoidBackward0", kSelf, 0, hardsigmoid_backward)
ANATOMY_UNARY_ENTRIES(logit, "LogitBackward0", kSelf, 0, logit_backward)
ANATOMY_UNARY_ENTRIES(leaky_relu, "LeakyReluBackward0", kSelf, 0, leaky_relu_backward)
ANATOMY_UNARY_ENTRIES(hardtanh, "HardtanhBackward0", kSelf, 0, hardtanh_backward)
ANATOMY_UNARY_ENTRIES(elu, "EluBackward0", kSelf, 0, elu_backward)
ANATOMY_UNARY_ENTRIES(selu, "EluBackward0", kSelf, 0, selu_backward)
#undef ANATOMY_UNARY_ENTRIES
const DerivativeEntry kPolygamma{"aten::polygamma", "PolygammaBackward0", args_mask({1}), 0, &polygamma_backward};
const DerivativeEntry kPolygamma_{"aten::polygamma_", "PolygammaBackward0", kSelf, 0, &polygamma_inplace_backward};
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
  ANATOMY_UNARY_REGISTER(log10, UnarySig)
  ANATOMY_UNARY_REGISTER(square, UnarySig)
  ANATOMY_UNARY_REGISTER(frac, UnarySig)
  ANATOMY_UNARY_REGISTER(asin, UnarySig)
  ANATOMY_UNARY_REGISTER(acos, UnarySig)
  ANATOMY_UNARY_REGISTER(atan, UnarySig)
  ANATOMY_UNARY_REGISTER(asinh, UnarySig)
  ANATOMY_UNARY_REGISTER(acosh, UnarySig)
  ANATOMY_UNARY_REGISTER(atanh, UnarySig)
  ANATOMY_UNARY_REGISTER(lgamma, UnarySig)
  ANATOMY_UNARY_REGISTER(digamma, UnarySig)
  ANATOMY_UNARY_REGISTER(erfc, UnarySig)
  ANATOMY_UNARY_REGISTER(erfinv, UnarySig)
  ANATOMY_UNARY_REGISTER(mish, UnarySig)
  ANATOMY_UNARY_REGISTER(hardswish, UnarySig)
  ANATOMY_UNARY_REGISTER(hardsigmoid, UnarySig)
  ANATOMY_UNARY_REGISTER(logit, LogitSig)
  ANATOMY_UNARY_REGISTER(leaky_relu, ScalarArgSig)
  ANATOMY_UNARY_REGISTER(hardtanh, TwoScalarSig)
  ANATOMY_UNARY_REGISTER(elu, EluSig)
  ANATOMY_UNARY_REGISTER(selu, UnarySig)
#undef ANATOMY_UNARY_REGISTER
  register_derivative<&kPolygamma, PolygammaSig>(m, "polygamma");
  register_derivative<&kPolygamma_, PolygammaInplaceSig>(m, "polygamma_");
  register_derivative<&kSoftplus, SoftplusSig>(m, "softplus");
  register_derivative<&kClampTensor, ClampTensorSig>(m, "clamp.Tensor");
}

}  // namespace anatomy::autograd
