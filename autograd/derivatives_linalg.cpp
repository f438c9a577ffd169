// Derivatives of the matrix products mm, bmm, addmm, baddbmm and _addmm_activation (matmul,
// linear, dot and outer are composites differentiated through these).
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"

namespace anatomy::autograd {
namespace {

using PairSig = Tensor(const Tensor&, const Tensor&);
using AddmmSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&);
using AddmmActivationSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&, bool);

// A matrix stored column-major: a transposed view of a contiguous one, as linear's w.t().
bool is_column_major(const Tensor& m) {
  return m.dim() == 2 && m.sizes()[0] > 1 && m.sizes()[1] > 1 && m.strides()[0] == 1 && m.strides()[1] == m.sizes()[0];
}
// The gradients of mat1 and mat2 in mat1 @ mat2, laid out like the operand (PyTorch's
// mm_mat1_backward / mm_mat2_backward): for a column-major operand the product is computed
// transposed, (g^T mat1)^T rather than mat1^T g, so that the gradient reaching the weight through
// linear's transpose is contiguous and AccumulateGrad keeps it instead of copying it.
Tensor mm_mat1_grad(const Tensor& g, const Tensor& mat1, const Tensor& mat2) {
  return is_column_major(mat1) ? mat2.mm(g.t()).t() : g.mm(mat2.t());
}
Tensor mm_mat2_grad(const Tensor& g, const Tensor& mat1, const Tensor& mat2) {
  return is_column_major(mat2) ? g.t().mm(mat1).t() : mat1.t().mm(g);
}

variable_list mm_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) ctx.set(out, 0, mm_mat1_grad(g[0], ctx.input(0), ctx.input(1)));
  if (ctx.needs_grad(1)) ctx.set(out, 1, mm_mat2_grad(g[0], ctx.input(0), ctx.input(1)));
  return out;
}
variable_list bmm_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) ctx.set(out, 0, g[0].bmm(ctx.input(1).transpose(1, 2)));
  if (ctx.needs_grad(1)) ctx.set(out, 1, ctx.input(0).transpose(1, 2).bmm(g[0]));
  return out;
}
// addmm(self, mat1, mat2, beta, alpha) = beta * self + alpha * mat1 @ mat2, given the gradient
// `g` of that sum.
variable_list addmm_grads(BackwardContext& ctx, const Tensor& g) {
  variable_list out = ctx.grads();
  const double beta = ctx.arg<Scalar>(3).to<double>(), alpha = ctx.arg<Scalar>(4).to<double>();
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, beta == 1.0 ? g : g * beta));
  const Tensor ga = alpha == 1.0 ? g : g * alpha;
  if (ctx.needs_grad(1)) ctx.set(out, 1, mm_mat1_grad(ga, ctx.input(1), ctx.input(2)));
  if (ctx.needs_grad(2)) ctx.set(out, 2, mm_mat2_grad(ga, ctx.input(1), ctx.input(2)));
  return out;
}
variable_list addmm_backward(BackwardContext& ctx, const variable_list& g) { return addmm_grads(ctx, g[0]); }

// _addmm_activation = relu(addmm(...)) or gelu(addmm(...), "tanh"). relu's gradient passes where
// the result is positive (threshold_backward, as ReluBackward0); gelu's needs the pre-activation, recomputed with addmm
// from the saved inputs (one more product in backward instead of a saved [n, m] tensor).
variable_list addmm_activation_backward(BackwardContext& ctx, const variable_list& g) {
  Tensor pre_grad;
  if (ctx.arg<bool>(5)) {
    const Tensor pre = addmm(ctx.input(0), ctx.input(1), ctx.input(2), ctx.arg<Scalar>(3), ctx.arg<Scalar>(4));
    pre_grad = gelu_grad(g[0], pre, "tanh");
  } else {
    pre_grad = threshold_backward(g[0], ctx.output(0), 0);
  }
  return addmm_grads(ctx, pre_grad);
}

// baddbmm(self, batch1, batch2, beta, alpha) = beta * self + alpha * batch1 @ batch2, self
// broadcast to the batched product.
variable_list baddbmm_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const double beta = ctx.arg<Scalar>(3).to<double>(), alpha = ctx.arg<Scalar>(4).to<double>();
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_for_input(ctx, 0, beta == 1.0 ? g[0] : g[0] * beta));
  const Tensor ga = alpha == 1.0 ? g[0] : g[0] * alpha;
  if (ctx.needs_grad(1)) ctx.set(out, 1, grad_for_input(ctx, 1, ga.bmm(ctx.input(2).transpose(1, 2))));
  if (ctx.needs_grad(2)) ctx.set(out, 2, grad_for_input(ctx, 2, ctx.input(1).transpose(1, 2).bmm(ga)));
  return out;
}

const DerivativeEntry kMm{"aten::mm", "MmBackward0", args_mask({0, 1}), 0, &mm_backward};
const DerivativeEntry kBmm{"aten::bmm", "BmmBackward0", args_mask({0, 1}), 0, &bmm_backward};
const DerivativeEntry kAddmm{"aten::addmm", "AddmmBackward0", args_mask({1, 2}), 0, &addmm_backward};
const DerivativeEntry kAddmmActivation{"aten::_addmm_activation", "AddmmActivationBackward0", args_mask({0, 1, 2}), 1,
                                       &addmm_activation_backward};
const DerivativeEntry kBaddbmm{"aten::baddbmm", "BaddbmmBackward0", args_mask({1, 2}), 0, &baddbmm_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  register_derivative<&kMm, PairSig>(m, "mm");
  register_derivative<&kBmm, PairSig>(m, "bmm");
  register_derivative<&kAddmm, AddmmSig>(m, "addmm");
  register_derivative<&kAddmmActivation, AddmmActivationSig>(m, "_addmm_activation");
  register_derivative<&kBaddbmm, AddmmSig>(m, "baddbmm");
}

}  // namespace anatomy::autograd
