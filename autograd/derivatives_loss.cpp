// Derivatives of the losses that have their own: _cross_entropy_rows (cross_entropy's fused
// operator) and binary_cross_entropy_with_logits. The other losses are composites of
// differentiable operators (dispatch/ops/loss.cpp).
//
// _cross_entropy_rows follows Note [Fused backward unless create_graph] (derivatives_nn.cpp):
// without a graph of the backward, one call of _cross_entropy_rows_backward (one read of the
// logits on CUDA); with one, the same arithmetic from public operators, with the softmax
// recomputed from the logits so that the second derivative sees it depend on them.
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/ops/loss.h"
#include "anatomy/dispatch/ops/loss_rules.h"

namespace anatomy::autograd {
namespace {

using RowsSig = std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t, double);
using BceSig = Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&,
                      int64_t);

std::optional<Tensor> optional_input(const BackwardContext& ctx, int arg) {
  const Tensor t = ctx.input(arg);
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}

DType computation_type(const Tensor& logits) {
  return logits.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
}

// Arguments: logits, target, weight, ignore_index, label_smoothing. Outputs: the rows' loss and
// their log-sum-exp (whose gradient is the softmax).
variable_list cross_entropy_rows_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0), target = ctx.input(1);
  const std::optional<Tensor> weight = optional_input(ctx, 2);
  const int64_t ignore_index = ctx.arg<int64_t>(3);
  const double s = ctx.arg<double>(4);
  const bool lse_grad = !ctx.grad_zero_filled(1);
  // The logits in fp32 (fp64 stays) for the operators' paths only: the fused one reads them as
  // they are, and converting a GPT's bf16 logits would cost more than the fused kernel itself.
  const auto computed = [&] { return x.to(computation_type(x)); };
  if (ctx.needs_grad(0)) {
    const Tensor lse = ctx.output(1);
    if (!GradMode::is_enabled() && !lse_grad && g[0].sizes() == lse.sizes() && g[0].device() == x.device()) {
      ctx.set(out, 0, _cross_entropy_rows_backward(g[0], x, target, weight, lse, ignore_index, s));
    } else {
      const Tensor xa = computed();
      const Tensor prob = softmax(xa, 1);
      Tensor dx = cross_entropy_rows_grad(g[0].to(xa.dtype()), prob, target, weight, ignore_index, s);
      if (lse_grad) dx = dx + prob * g[1].to(xa.dtype()).unsqueeze(1);
      ctx.set(out, 0, grad_for_input(ctx, 0, dx));
    }
  }
  if (ctx.needs_grad(2)) {
    // dL/dw_c = sum_i g_i [(1 - s) [t_i = c] (lse_i - x_ic) + (s / C) (lse_i - x_ic)] over the
    // rows whose target is not ignored.
    const Tensor xa = computed();
    const Tensor lse = logsumexp(xa, {1});
    const Tensor ignored = target.eq(ignore_index);
    const Tensor safe = where(ignored, 0, target);
    const Tensor gm = where(ignored, 0.0, g[0].to(xa.dtype()));
    const Tensor nll = lse - gather(xa, 1, safe.unsqueeze(1)).squeeze(1);
    Tensor dw = scatter_add(zeros({xa.size(1)}, xa.options()), 0, safe, gm * nll * (1.0 - s));
    if (s > 0) {
      dw = dw + ((lse.unsqueeze(1) - xa) * gm.unsqueeze(1)).sum({0}) * (s / static_cast<double>(xa.size(1)));
    }
    ctx.set(out, 2, grad_for_input(ctx, 2, dw));
  }
  return out;
}

// Arguments: self (logits x), target t, weight w, pos_weight pw, reduction. With
// sp = softplus(-x) and lw = 1 + (pw - 1) t, the loss is w [(1 - t) x + lw sp]:
//   d/dx = w [sigmoid(x) - t - (pw - 1) t (1 - sigmoid(x))]    d/dt = w [(pw - 1) sp - x]
//   d/dw = (1 - t) x + lw sp                                    d/dpw = w t sp
variable_list binary_cross_entropy_with_logits_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0), t = ctx.input(1), w = ctx.input(2), pw = ctx.input(3);
  const int64_t reduction = ctx.arg<int64_t>(4);
  const Tensor ge = reduction == LossReduction::Mean ? g[0] / static_cast<double>(x.numel()) : g[0];
  const Tensor gw = w.defined() ? ge * w : ge;
  if (ctx.needs_grad(0)) {
    const Tensor sig = x.sigmoid();
    Tensor d = sig - t;
    if (pw.defined()) d = d - (pw - 1.0) * t * (1.0 - sig);
    ctx.set(out, 0, grad_for_input(ctx, 0, d * gw));
  }
  if (!ctx.needs_grad(1) && !ctx.needs_grad(2) && !ctx.needs_grad(3)) return out;
  const Tensor sp = softplus_of_negative(x);
  if (ctx.needs_grad(1)) {
    const Tensor d = pw.defined() ? (pw - 1.0) * sp - x : -x;
    ctx.set(out, 1, grad_for_input(ctx, 1, d * gw));
  }
  if (ctx.needs_grad(2)) {
    const Tensor lw = pw.defined() ? 1.0 + (pw - 1.0) * t : Tensor();
    const Tensor unweighted = (1.0 - t) * x + (lw.defined() ? lw * sp : sp);
    ctx.set(out, 2, grad_for_input(ctx, 2, unweighted * ge));
  }
  if (ctx.needs_grad(3)) ctx.set(out, 3, grad_for_input(ctx, 3, t * sp * gw));
  return out;
}

const DerivativeEntry kCrossEntropyRows{"aten::_cross_entropy_rows", "CrossEntropyRowsBackward0", args_mask({0, 1, 2}),
                                        args_mask({1}), &cross_entropy_rows_backward};
// The fused backward is called by the formula above with grad mode off; called directly on
// tensors that require grad, it raises NotImplementedError, as _softmax_backward_data does
// (autograd/not_differentiable.cpp).
const DerivativeEntry kCrossEntropyRowsBackward{"aten::_cross_entropy_rows_backward",
                                                "CrossEntropyRowsBackwardBackward0", 0, 0, nullptr};
using RowsBackwardSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, const Tensor&,
                               int64_t, double);
const DerivativeEntry kBceWithLogits{"aten::binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
                                     args_mask({0, 1, 2, 3}), 0, &binary_cross_entropy_with_logits_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  register_derivative<&kCrossEntropyRows, RowsSig>(m, "_cross_entropy_rows");
  register_derivative<&kCrossEntropyRowsBackward, RowsBackwardSig>(m, "_cross_entropy_rows_backward");
  register_derivative<&kBceWithLogits, BceSig>(m, "binary_cross_entropy_with_logits");
}

}  // namespace anatomy::autograd
