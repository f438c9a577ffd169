// Derivatives of the element-wise binary and ternary operators: add, sub, mul, div, pow,
// maximum, minimum (and max, min of two tensors), atan2, hypot, logaddexp, logaddexp2, xlogy,
// copysign, clamp_min, clamp_max, floor_divide, where, lerp, masked_fill, remainder, fmod, div with
// a rounding mode (functional and in-place) and threshold_backward. PyTorch's formulas (derivatives.yaml); a
// Scalar operand reaches these as a wrapped number that needs no gradient.
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"

namespace anatomy::autograd {
namespace {

using BinAlphaSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using BinSig = Tensor(const Tensor&, const Tensor&);
using TernarySig = Tensor(const Tensor&, const Tensor&, const Tensor&);
using LerpScalarSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using MaskFillSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using ModeSig = Tensor(const Tensor&, const Tensor&, std::optional<std::string_view>);
using ThresholdSig = Tensor(const Tensor&, const Tensor&, const Scalar&);

variable_list add_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0]));
  if (ctx.needs_grad(1)) {
    const Scalar& alpha = ctx.arg<Scalar>(2);
    ctx.set(out, 1, grad_for_input(ctx, 1, alpha.to<double>() == 1.0 ? g[0] : g[0] * alpha));
  }
  return out;
}
variable_list sub_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0]));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, g[0] * -ctx.arg<Scalar>(2).to<double>()));
  return out;
}
variable_list mul_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0] * ctx.input(1)));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, g[0] * ctx.input(0)));
  return out;
}
variable_list div_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor other = ctx.input(1);
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0] / other));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, -g[0] * ctx.input(0) / (other * other)));
  return out;
}

// pow(self, exponent): PyTorch's pow_backward_self and pow_backward_exponent. A zero exponent
// gives self zero gradient (0 * x^-1 would be NaN at x = 0); 0^e with e >= 0 gives the exponent
// zero gradient (log 0 is -inf).
variable_list pow_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor self = ctx.input(0), exponent = ctx.input(1);
  if (ctx.needs_grad(0)) {
    const Tensor d = g[0] * exponent * self.pow(exponent - 1);
    ctx.set(out, 0, grad_for_input(ctx, 0, where(exponent == 0, Scalar(0), d)));
  }
  if (ctx.needs_grad(1)) {
    const Tensor base_zero = logical_and(self == 0, exponent >= 0);
    const Tensor d = ctx.output(0) * self.log();
    ctx.set(out, 1, grad_for_input(ctx, 1, g[0] * where(base_zero, Scalar(0), d)));
  }
  return out;
}

// maximum / minimum: the gradient goes to the larger (smaller) operand; ties split it 50/50.
template <bool IsMax>
variable_list extremum_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor self = ctx.input(0), other = ctx.input(1);
  const Tensor shared = where(self == other, g[0] / 2, g[0]);
  const Tensor self_loses = IsMax ? self < other : self > other;
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, shared.masked_fill(self_loses, 0)));
  if (ctx.needs_grad(1)) {
    const Tensor other_loses = IsMax ? self > other : self < other;
    ctx.set(out, 1, grad_for_input(ctx, 1, shared.masked_fill(other_loses, 0)));
  }
  return out;
}

variable_list atan2_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor self = ctx.input(0), other = ctx.input(1);
  const Tensor scaled = g[0] / (self * self + other * other);
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, scaled * other));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, -scaled * self));
  return out;
}

// hypot(self, other) = r: d/dself = self / r, d/dother = other / r (PyTorch's; NaN at 0, 0).
variable_list hypot_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor scaled = g[0] / ctx.output(0);
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, scaled * ctx.input(0)));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, scaled * ctx.input(1)));
  return out;
}

// logaddexp(self, other): d/dself = 1 / (1 + exp(other - self)), and the same with the two swapped;
// logaddexp2 with powers of 2 (PyTorch's formulas: the base-2 one has no ln 2, as it cancels).
template <bool Base2>
variable_list logaddexp_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor self = ctx.input(0), other = ctx.input(1);
  auto weight = [](const Tensor& d) { return 1 + (Base2 ? pow(Scalar(2), d) : d.exp()); };
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0] / weight(other - self)));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, g[0] / weight(self - other)));
  return out;
}

// xlogy(self, other) = self * log(other): d/dself = xlogy(self != 0, other) (0 where self is 0),
// d/dother = self / other.
variable_list xlogy_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor self = ctx.input(0), other = ctx.input(1);
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0] * xlogy(self != 0, other)));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, g[0] * self / other));
  return out;
}

// copysign(self, other): +-1 times the gradient for self (result / self, 0 where self is 0, as
// PyTorch's copysign_tensor_self_backward); other only gives a sign, no gradient.
variable_list copysign_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor self = ctx.input(0);
  if (ctx.needs_grad(0)) {
    const Tensor ratio = (ctx.output(0) / self).masked_fill(self == 0, 0);
    ctx.set(out, 0, grad_for_input(ctx, 0, g[0] * ratio));
  }
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, zeros_like(g[0])));
  return out;
}

// clamp_min(self, min): the gradient goes to self where self >= min, to min where self < min (a
// NaN gives neither any); clamp_max mirrored.
template <bool IsMin>
variable_list clamp_bound_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor self = ctx.input(0), bound = ctx.input(1);
  if (ctx.needs_grad(0)) {
    ctx.set(out, 0, grad_for_input(ctx, 0, where(IsMin ? self >= bound : self <= bound, g[0], Scalar(0))));
  }
  if (ctx.needs_grad(1)) {
    ctx.set(out, 1, grad_for_input(ctx, 1, where(IsMin ? self < bound : self > bound, g[0], Scalar(0))));
  }
  return out;
}

// floor_divide: piecewise constant, a zero gradient for both (div with rounding_mode 'floor''s).
variable_list floor_divide_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, zeros_like(g[0])));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, zeros_like(g[0])));
  return out;
}

// where(condition, self, other): the condition is bool and gets no gradient.
variable_list where_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor cond = ctx.input(0);
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, where(cond, g[0], Scalar(0))));
  if (ctx.needs_grad(2)) ctx.set(out, 2, grad_for_input(ctx, 2, where(cond, Scalar(0), g[0])));
  return out;
}

// lerp(self, end, weight) = self + weight * (end - self).
variable_list lerp_scalar_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const double w = ctx.arg<Scalar>(2).to_double();
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0] * (1 - w)));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, g[0] * w));
  return out;
}
variable_list lerp_tensor_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor weight = ctx.input(2);
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0] * (1 - weight)));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, g[0] * weight));
  if (ctx.needs_grad(2)) ctx.set(out, 2, grad_for_input(ctx, 2, g[0] * (ctx.input(1) - ctx.input(0))));
  return out;
}

// masked_fill(self, mask, value): the filled elements do not depend on self.
variable_list masked_fill_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, grad_for_input(ctx, 0, g[0].masked_fill(ctx.input(1), 0)));
  return out;
}

// remainder (floor rounding) and fmod (trunc rounding): self - other * round(self / other),
// whose rounded quotient is piecewise constant.
template <bool Floor>
variable_list rounded_remainder_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0]));
  if (ctx.needs_grad(1)) {
    const Tensor quotient = ctx.input(0).div(ctx.input(1), Floor ? "floor" : "trunc");
    ctx.set(out, 1, grad_for_input(ctx, 1, -g[0] * quotient));
  }
  return out;
}

// div with rounding_mode: true division without one, piecewise constant (zero) with one.
variable_list div_mode_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const bool rounded = !ctx.is_none(2);
  if (ctx.needs_grad(0)) {
    ctx.set(out, 0, grad_for_input(ctx, 0, rounded ? zeros_like(g[0]) : g[0] / ctx.input(1)));
  }
  if (ctx.needs_grad(1)) {
    const Tensor other = ctx.input(1);
    ctx.set(out, 1, grad_for_input(ctx, 1, rounded ? zeros_like(g[0]) : -g[0] * ctx.input(0) / (other * other)));
  }
  return out;
}

// threshold_backward(grad_output, self, threshold) is linear in grad_output and piecewise
// constant in self (PyTorch's formula): relu's double backward goes through it.
variable_list threshold_backward_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Scalar& threshold = ctx.arg<Scalar>(2);
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, threshold_backward(g[0], ctx.input(1), threshold)));
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, zeros_like(g[0])));
  return out;
}

constexpr uint32_t kBoth = args_mask({0, 1});

const DerivativeEntry kAdd{"aten::add.Tensor", "AddBackward0", 0, 0, &add_backward};
const DerivativeEntry kAdd_{"aten::add_.Tensor", "AddBackward0", 0, 0, &add_backward};
const DerivativeEntry kSub{"aten::sub.Tensor", "SubBackward0", 0, 0, &sub_backward};
const DerivativeEntry kSub_{"aten::sub_.Tensor", "SubBackward0", 0, 0, &sub_backward};
const DerivativeEntry kMul{"aten::mul.Tensor", "MulBackward0", args_mask({0, 1}), 0, &mul_backward};
const DerivativeEntry kMul_{"aten::mul_.Tensor", "MulBackward0", args_mask({0, 1}), 0, &mul_backward};
const DerivativeEntry kDiv{"aten::div.Tensor", "DivBackward0", args_mask({0, 1}), 0, &div_backward};
const DerivativeEntry kDiv_{"aten::div_.Tensor", "DivBackward0", args_mask({0, 1}), 0, &div_backward};

const DerivativeEntry kPow{"aten::pow.Tensor_Tensor", "PowBackward1", kBoth, args_mask({0}), &pow_backward};
const DerivativeEntry kPow_{"aten::pow_.Tensor", "PowBackward1", kBoth, args_mask({0}), &pow_backward};
const DerivativeEntry kMaximum{"aten::maximum", "MaximumBackward0", kBoth, 0, &extremum_backward<true>};
const DerivativeEntry kMinimum{"aten::minimum", "MinimumBackward0", kBoth, 0, &extremum_backward<false>};
const DerivativeEntry kAtan2{"aten::atan2", "Atan2Backward0", kBoth, 0, &atan2_backward};
const DerivativeEntry kAtan2_{"aten::atan2_", "Atan2Backward0", kBoth, 0, &atan2_backward};
const DerivativeEntry kHypot{"aten::hypot", "HypotBackward0", kBoth, args_mask({0}), &hypot_backward};
const DerivativeEntry kHypot_{"aten::hypot_", "HypotBackward0", kBoth, args_mask({0}), &hypot_backward};
const DerivativeEntry kMaxOther{"aten::max.other", "MaxBackward2", kBoth, 0, &extremum_backward<true>};
const DerivativeEntry kMinOther{"aten::min.other", "MinBackward2", kBoth, 0, &extremum_backward<false>};
const DerivativeEntry kLogaddexp{"aten::logaddexp", "LogaddexpBackward0", kBoth, 0, &logaddexp_backward<false>};
const DerivativeEntry kLogaddexp2{"aten::logaddexp2", "Logaddexp2Backward0", kBoth, 0, &logaddexp_backward<true>};
const DerivativeEntry kXlogy{"aten::xlogy.Tensor", "XlogyBackward0", kBoth, 0, &xlogy_backward};
const DerivativeEntry kXlogy_{"aten::xlogy_.Tensor", "XlogyBackward0", kBoth, 0, &xlogy_backward};
const DerivativeEntry kCopysign{"aten::copysign.Tensor", "CopysignBackward0", args_mask({0}), args_mask({0}),
                                &copysign_backward};
const DerivativeEntry kCopysign_{"aten::copysign_.Tensor", "CopysignBackward0", args_mask({0}), args_mask({0}),
                                 &copysign_backward};
const DerivativeEntry kClampMin{"aten::clamp_min.Tensor", "ClampMinBackward1", kBoth, 0, &clamp_bound_backward<true>};
const DerivativeEntry kClampMin_{"aten::clamp_min_.Tensor", "ClampMinBackward1", kBoth, 0, &clamp_bound_backward<true>};
const DerivativeEntry kClampMax{"aten::clamp_max.Tensor", "ClampMaxBackward1", kBoth, 0, &clamp_bound_backward<false>};
const DerivativeEntry kClampMax_{"aten::clamp_max_.Tensor", "ClampMaxBackward1", kBoth, 0,
                                 &clamp_bound_backward<false>};
const DerivativeEntry kFloorDivide{"aten::floor_divide", "FloorDivideBackward0", 0, 0, &floor_divide_backward};
const DerivativeEntry kFloorDivide_{"aten::floor_divide_.Tensor", "FloorDivideBackward0", 0, 0, &floor_divide_backward};
const DerivativeEntry kWhere{"aten::where.self", "WhereBackward0", args_mask({0}), 0, &where_backward};
const DerivativeEntry kLerpScalar{"aten::lerp.Scalar", "LerpBackward0", 0, 0, &lerp_scalar_backward};
const DerivativeEntry kLerpScalar_{"aten::lerp_.Scalar", "LerpBackward0", 0, 0, &lerp_scalar_backward};
const DerivativeEntry kLerpTensor{"aten::lerp.Tensor", "LerpBackward1", args_mask({0, 1, 2}), 0, &lerp_tensor_backward};
const DerivativeEntry kLerpTensor_{"aten::lerp_.Tensor", "LerpBackward1", args_mask({0, 1, 2}), 0,
                                   &lerp_tensor_backward};
const DerivativeEntry kMaskedFill{"aten::masked_fill.Scalar", "MaskedFillBackward0", args_mask({1}), 0,
                                  &masked_fill_backward};
const DerivativeEntry kMaskedFill_{"aten::masked_fill_.Scalar", "MaskedFillBackward0", args_mask({1}), 0,
                                   &masked_fill_backward};
const DerivativeEntry kRemainder{"aten::remainder.Tensor", "RemainderBackward1", kBoth, 0,
                                 &rounded_remainder_backward<true>};
const DerivativeEntry kRemainder_{"aten::remainder_.Tensor", "RemainderBackward1", kBoth, 0,
                                  &rounded_remainder_backward<true>};
const DerivativeEntry kFmod{"aten::fmod.Tensor", "FmodBackward1", kBoth, 0, &rounded_remainder_backward<false>};
const DerivativeEntry kFmod_{"aten::fmod_.Tensor", "FmodBackward1", kBoth, 0, &rounded_remainder_backward<false>};
const DerivativeEntry kDivMode{"aten::div.Tensor_mode", "DivBackward2", kBoth, 0, &div_mode_backward};
const DerivativeEntry kDivMode_{"aten::div_.Tensor_mode", "DivBackward2", kBoth, 0, &div_mode_backward};
const DerivativeEntry kThresholdBackward{"aten::threshold_backward", "ThresholdBackwardBackward0", args_mask({1}), 0,
                                         &threshold_backward_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  register_derivative<&kAdd, BinAlphaSig>(m, "add.Tensor");
  register_derivative<&kAdd_, BinAlphaSig>(m, "add_.Tensor");
  register_derivative<&kSub, BinAlphaSig>(m, "sub.Tensor");
  register_derivative<&kSub_, BinAlphaSig>(m, "sub_.Tensor");
  register_derivative<&kMul, BinSig>(m, "mul.Tensor");
  register_derivative<&kMul_, BinSig>(m, "mul_.Tensor");
  register_derivative<&kDiv, BinSig>(m, "div.Tensor");
  register_derivative<&kDiv_, BinSig>(m, "div_.Tensor");
  register_derivative<&kPow, BinSig>(m, "pow.Tensor_Tensor");
  register_derivative<&kPow_, BinSig>(m, "pow_.Tensor");
  register_derivative<&kMaximum, BinSig>(m, "maximum");
  register_derivative<&kMinimum, BinSig>(m, "minimum");
  register_derivative<&kAtan2, BinSig>(m, "atan2");
  register_derivative<&kAtan2_, BinSig>(m, "atan2_");
  register_derivative<&kHypot, BinSig>(m, "hypot");
  register_derivative<&kHypot_, BinSig>(m, "hypot_");
  register_derivative<&kMaxOther, BinSig>(m, "max.other");
  register_derivative<&kMinOther, BinSig>(m, "min.other");
  register_derivative<&kLogaddexp, BinSig>(m, "logaddexp");
  register_derivative<&kLogaddexp2, BinSig>(m, "logaddexp2");
  register_derivative<&kXlogy, BinSig>(m, "xlogy.Tensor");
  register_derivative<&kXlogy_, BinSig>(m, "xlogy_.Tensor");
  register_derivative<&kCopysign, BinSig>(m, "copysign.Tensor");
  register_derivative<&kCopysign_, BinSig>(m, "copysign_.Tensor");
  register_derivative<&kClampMin, BinSig>(m, "clamp_min.Tensor");
  register_derivative<&kClampMin_, BinSig>(m, "clamp_min_.Tensor");
  register_derivative<&kClampMax, BinSig>(m, "clamp_max.Tensor");
  register_derivative<&kClampMax_, BinSig>(m, "clamp_max_.Tensor");
  register_derivative<&kFloorDivide, BinSig>(m, "floor_divide");
  register_derivative<&kFloorDivide_, BinSig>(m, "floor_divide_.Tensor");
  register_derivative<&kWhere, TernarySig>(m, "where.self");
  register_derivative<&kLerpScalar, LerpScalarSig>(m, "lerp.Scalar");
  register_derivative<&kLerpScalar_, LerpScalarSig>(m, "lerp_.Scalar");
  register_derivative<&kLerpTensor, TernarySig>(m, "lerp.Tensor");
  register_derivative<&kLerpTensor_, TernarySig>(m, "lerp_.Tensor");
  register_derivative<&kMaskedFill, MaskFillSig>(m, "masked_fill.Scalar");
  register_derivative<&kMaskedFill_, MaskFillSig>(m, "masked_fill_.Scalar");
  register_derivative<&kRemainder, BinSig>(m, "remainder.Tensor");
  register_derivative<&kRemainder_, BinSig>(m, "remainder_.Tensor");
  register_derivative<&kFmod, BinSig>(m, "fmod.Tensor");
  register_derivative<&kFmod_, BinSig>(m, "fmod_.Tensor");
  register_derivative<&kDivMode, ModeSig>(m, "div.Tensor_mode");
  register_derivative<&kDivMode_, ModeSig>(m, "div_.Tensor_mode");
  register_derivative<&kThresholdBackward, ThresholdSig>(m, "threshold_backward");
}

}  // namespace anatomy::autograd
