// cross_entropy's fused operators, _cross_entropy_rows and _cross_entropy_rows_backward: schemas,
// the C++ functions, and the composite kernels every backend without its own falls back to (CPU,
// Meta), written with public operators in the computation type. CUDA reads each row of logits
// once forward and once backward (backends/cuda/loss/). A target outside [0, C) that is not
// ignore_index is an IndexError (here from gather, renamed; on CUDA at the next wait, Note [Bad
// indices on the device]).
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/loss.h"
#include "anatomy/dispatch/ops/loss_rules.h"

namespace anatomy {
namespace {

constexpr const char* kRows = "_cross_entropy_rows";
constexpr const char* kRowsBackward = "_cross_entropy_rows_backward";

Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : t.to(d); }

std::tuple<Tensor, Tensor> cross_entropy_rows_composite(const Tensor& logits, const Tensor& target,
                                                        const std::optional<Tensor>& weight, int64_t ignore_index,
                                                        double label_smoothing) {
  const CrossEntropyRowsPlan p = prepare_cross_entropy_rows(kRows, logits, target, weight, label_smoothing, false);
  return naming_errors(kRows, [&] {
    const Tensor x = as_dtype(logits, p.acc);
    const Tensor lse = logsumexp(x, {1});
    const Tensor ignored = target.eq(ignore_index);
    const Tensor safe = where(ignored, 0, target);
    Tensor loss = lse - gather(x, 1, safe.unsqueeze(1)).squeeze(1);
    const bool has_weight = p.weight.defined();
    const Tensor w = has_weight ? as_dtype(p.weight, p.acc) : Tensor();
    if (has_weight) loss = loss * index_select(w, 0, safe);
    if (label_smoothing > 0) {
      const double classes = static_cast<double>(p.classes);
      const Tensor smooth =
          has_weight ? ((lse.unsqueeze(1) - x) * w.unsqueeze(0)).sum({1}) : lse * classes - x.sum({1});
      loss = loss * (1.0 - label_smoothing) + smooth * (label_smoothing / classes);
    }
    return std::tuple<Tensor, Tensor>{where(ignored, 0.0, loss), lse};
  });
}

Tensor cross_entropy_rows_backward_composite(const Tensor& grad_loss, const Tensor& logits, const Tensor& target,
                                             const std::optional<Tensor>& weight, const Tensor& lse,
                                             int64_t ignore_index, double label_smoothing) {
  const CrossEntropyRowsBackwardPlan p = prepare_cross_entropy_rows_backward(kRowsBackward, grad_loss, logits, target,
                                                                             weight, lse, label_smoothing, false);
  return naming_errors(kRowsBackward, [&] {
    const Tensor prob = (as_dtype(logits, p.rows.acc) - p.lse.unsqueeze(1)).exp();
    const std::optional<Tensor> w = p.rows.weight.defined() ? std::optional<Tensor>(p.rows.weight) : std::nullopt;
    return as_dtype(cross_entropy_rows_grad(p.grad_loss, prob, target, w, ignore_index, label_smoothing),
                    logits.dtype());
  });
}

}  // namespace

Tensor cross_entropy_rows_grad(const Tensor& grad_loss, const Tensor& prob, const Tensor& target,
                               const std::optional<Tensor>& weight, int64_t ignore_index, double label_smoothing) {
  const int64_t rows = prob.size(0);
  const double classes = static_cast<double>(prob.size(1)), s = label_smoothing;
  const Tensor ignored = target.eq(ignore_index);
  const Tensor safe = where(ignored, 0, target).unsqueeze(1);
  const bool has_weight = weight && weight->defined();
  Tensor d;
  if (has_weight) {
    const Tensor w = as_dtype(*weight, prob.dtype());
    const Tensor w_t = index_select(w, 0, safe.squeeze(1));
    // p's factor per row, (1 - s) w_t + s W / C, then -(1 - s) w_t at the target's column.
    d = prob * (w_t * (1.0 - s) + w.sum() * (s / classes)).unsqueeze(1);
    d = scatter_add(d, 1, safe, (w_t * (s - 1.0)).unsqueeze(1));
    if (s > 0) d = d - w.unsqueeze(0) * (s / classes);
  } else {
    d = scatter_add(prob, 1, safe, full({rows, 1}, s - 1.0, prob.options()));
    if (s > 0) d = d - s / classes;
  }
  return where(ignored.unsqueeze(1), 0.0, d * grad_loss.unsqueeze(1));
}

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "_cross_entropy_rows(Tensor logits, Tensor target, Tensor? weight, int ignore_index, float label_smoothing) -> "
      "(Tensor, Tensor)");
  m.def(
      "_cross_entropy_rows_backward(Tensor grad_loss, Tensor logits, Tensor target, Tensor? weight, Tensor lse, "
      "int ignore_index, float label_smoothing) -> Tensor");
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("_cross_entropy_rows", ANATOMY_KERNEL(cross_entropy_rows_composite));
  m.impl("_cross_entropy_rows_backward", ANATOMY_KERNEL(cross_entropy_rows_backward_composite));
}

std::tuple<Tensor, Tensor> _cross_entropy_rows(const Tensor& logits, const Tensor& target,
                                               const std::optional<Tensor>& weight, int64_t ignore_index,
                                               double label_smoothing) {
  ANATOMY_OP(op, "aten::_cross_entropy_rows",
             std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t, double));
  return op.call(logits, target, weight, ignore_index, label_smoothing);
}
Tensor _cross_entropy_rows_backward(const Tensor& grad_loss, const Tensor& logits, const Tensor& target,
                                    const std::optional<Tensor>& weight, const Tensor& lse, int64_t ignore_index,
                                    double label_smoothing) {
  ANATOMY_OP(op, "aten::_cross_entropy_rows_backward",
             Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, const Tensor&, int64_t,
                    double));
  return op.call(grad_loss, logits, target, weight, lse, ignore_index, label_smoothing);
}

}  // namespace anatomy
