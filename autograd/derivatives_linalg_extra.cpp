// Derivative of baddbmm (beta * self + alpha * batch1 @ batch2, self broadcast to the batched
// product). dot and outer are composites, differentiated through their parts.
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"

namespace anatomy::autograd {
namespace {

using AddSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&);

variable_list baddbmm_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const double beta = ctx.arg<Scalar>(3).to<double>(), alpha = ctx.arg<Scalar>(4).to<double>();
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, beta == 1.0 ? g[0] : g[0] * beta));
  const Tensor ga = alpha == 1.0 ? g[0] : g[0] * alpha;
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, ga.bmm(ctx.input(2).transpose(1, 2))));
  if (ctx.needs_grad(2)) ctx.set(out, 2, grad_for_input(ctx, 2, ctx.input(1).transpose(1, 2).bmm(ga)));
  return out;
}

const DerivativeEntry kBaddbmm{"aten::baddbmm", "BaddbmmBackward0", args_mask({1, 2}), 0, &baddbmm_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) { register_derivative<&kBaddbmm, AddSig>(m, "baddbmm"); }

}  // namespace anatomy::autograd
