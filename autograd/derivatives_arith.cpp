// Derivatives of the element-wise arithmetic operators and the common unary ones, functional
// and in-place. A formula returns one gradient per tensor argument (BackwardContext::set skips
// the ones no edge needs).
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"

namespace anatomy::autograd {
namespace {

using BinAlphaSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using BinSig = Tensor(const Tensor&, const Tensor&);
using UnarySig = Tensor(const Tensor&);

// ---- binary ----
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

const DerivativeEntry kAdd{"aten::add.Tensor", "AddBackward0", 0, 0, &add_backward};
const DerivativeEntry kAdd_{"aten::add_.Tensor", "AddBackward0", 0, 0, &add_backward};
const DerivativeEntry kSub{"aten::sub.Tensor", "SubBackward0", 0, 0, &sub_backward};
const DerivativeEntry kSub_{"aten::sub_.Tensor", "SubBackward0", 0, 0, &sub_backward};
const DerivativeEntry kMul{"aten::mul.Tensor", "MulBackward0", args_mask({0, 1}), 0, &mul_backward};
const DerivativeEntry kMul_{"aten::mul_.Tensor", "MulBackward0", args_mask({0, 1}), 0, &mul_backward};
const DerivativeEntry kDiv{"aten::div.Tensor", "DivBackward0", args_mask({0, 1}), 0, &div_backward};
const DerivativeEntry kDiv_{"aten::div_.Tensor", "DivBackward0", args_mask({0, 1}), 0, &div_backward};

// ---- unary: each from its input or its result ----
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
ANATOMY_UNARY_FORMULA(abs_backward, g[0] * ctx.input(0).sign())
ANATOMY_UNARY_FORMULA(reciprocal_backward, -g[0] * ctx.output(0) * ctx.output(0))
#undef ANATOMY_UNARY_FORMULA

constexpr uint32_t kSelf = args_mask({0});
constexpr uint32_t kResult = args_mask({0});  // output 0

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
ANATOMY_UNARY_ENTRIES(abs, "AbsBackward0", kSelf, 0, abs_backward)
ANATOMY_UNARY_ENTRIES(reciprocal, "ReciprocalBackward0", 0, kResult, reciprocal_backward)
#undef ANATOMY_UNARY_ENTRIES

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
#define ANATOMY_UNARY_REGISTER(op)                \
  register_derivative<&k_##op, UnarySig>(m, #op); \
  register_derivative<&k_##op##_, UnarySig>(m, #op "_");
  ANATOMY_UNARY_REGISTER(neg)
  ANATOMY_UNARY_REGISTER(exp)
  ANATOMY_UNARY_REGISTER(log)
  ANATOMY_UNARY_REGISTER(tanh)
  ANATOMY_UNARY_REGISTER(sigmoid)
  ANATOMY_UNARY_REGISTER(relu)
  ANATOMY_UNARY_REGISTER(sqrt)
  ANATOMY_UNARY_REGISTER(sin)
  ANATOMY_UNARY_REGISTER(cos)
  ANATOMY_UNARY_REGISTER(abs)
  ANATOMY_UNARY_REGISTER(reciprocal)
#undef ANATOMY_UNARY_REGISTER
}

}  // namespace anatomy::autograd
