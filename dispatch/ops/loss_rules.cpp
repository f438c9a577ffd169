// The argument rules of cross_entropy's fused operators (loss_rules.h).
#include "anatomy/dispatch/ops/loss_rules.h"

#include <cmath>

#include "anatomy/core/error.h"
#include "anatomy/dispatch/ops/print.h"

namespace anatomy {

CrossEntropyRowsPlan prepare_cross_entropy_rows(const char* op, const Tensor& logits, const Tensor& target,
                                                const std::optional<Tensor>& weight, double label_smoothing,
                                                bool contiguous) {
  ANATOMY_CHECK(logits.defined() && target.defined(), ValueError, "{}: logits and target must be defined", op);
  ANATOMY_CHECK(is_floating(logits.dtype()), TypeError, "{}: logits must be floating, got {}", op,
                name(logits.dtype()));
  ANATOMY_CHECK(logits.dim() == 2, ValueError, "{}: logits must be 2-D (rows, classes), got {} dims", op, logits.dim());
  ANATOMY_CHECK(target.dtype() == DType::Int64, TypeError, "{}: target must hold int64 class indices, got {}", op,
                name(target.dtype()));
  ANATOMY_CHECK(target.dim() == 1 && target.size(0) == logits.size(0), ValueError,
                "{}: target must be 1-D with one class per row of logits ({} rows), got shape {}", op, logits.size(0),
                shape_string(target.sizes()));
  ANATOMY_CHECK(target.device() == logits.device(), DeviceError, "{}: target is on {} but logits are on {}", op,
                target.device().str(), logits.device().str());
  ANATOMY_CHECK(std::isfinite(label_smoothing) && label_smoothing >= 0.0 && label_smoothing <= 1.0, ValueError,
                "{}: label_smoothing must be between 0.0 and 1.0, got {}", op, label_smoothing);
  CrossEntropyRowsPlan p;
  p.rows = logits.size(0);
  p.classes = logits.size(1);
  p.acc = logits.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const bool has_weight = weight && weight->defined();
  if (has_weight) {
    ANATOMY_CHECK(is_floating(weight->dtype()), TypeError, "{}: weight must be floating, got {}", op,
                  name(weight->dtype()));
    ANATOMY_CHECK(weight->dim() == 1 && weight->size(0) == p.classes, ValueError,
                  "{}: weight must be 1-D with one value per class ({} classes), got shape {}", op, p.classes,
                  shape_string(weight->sizes()));
    ANATOMY_CHECK(weight->device() == logits.device(), DeviceError, "{}: weight is on {} but logits are on {}", op,
                  weight->device().str(), logits.device().str());
  }
  if (!contiguous) {
    p.logits = logits;
    p.target = target;
    if (has_weight) p.weight = *weight;
    return p;
  }
  p.logits = logits.stride(1) == 1 && (logits.size(0) <= 1 || logits.stride(0) == logits.size(1)) ? logits
                                                                                                  : logits.contiguous();
  p.target = target.contiguous();
  if (has_weight) p.weight = (weight->dtype() == p.acc ? *weight : weight->to(p.acc)).contiguous();
  return p;
}

CrossEntropyRowsBackwardPlan prepare_cross_entropy_rows_backward(const char* op, const Tensor& grad_loss,
                                                                 const Tensor& logits, const Tensor& target,
                                                                 const std::optional<Tensor>& weight, const Tensor& lse,
                                                                 double label_smoothing, bool contiguous) {
  CrossEntropyRowsBackwardPlan p;
  p.rows = prepare_cross_entropy_rows(op, logits, target, weight, label_smoothing, contiguous);
  for (const Tensor* t : {&grad_loss, &lse}) {
    const char* what = t == &lse ? "lse" : "grad_loss";
    ANATOMY_CHECK(t->defined(), ValueError, "{}: {} must be defined", op, what);
    ANATOMY_CHECK(t->dim() == 1 && t->size(0) == p.rows.rows, ValueError,
                  "{}: {} must be 1-D with one value per row ({} rows), got shape {}", op, what, p.rows.rows,
                  shape_string(t->sizes()));
    ANATOMY_CHECK(is_floating(t->dtype()), TypeError, "{}: {} must be floating, got {}", op, what, name(t->dtype()));
    ANATOMY_CHECK(t->device() == logits.device(), DeviceError, "{}: {} is on {} but logits are on {}", op, what,
                  t->device().str(), logits.device().str());
  }
  const DType acc = p.rows.acc;
  p.grad_loss = grad_loss.dtype() == acc ? grad_loss : grad_loss.to(acc);
  p.lse = lse.dtype() == acc ? lse : lse.to(acc);
  if (contiguous) {
    p.grad_loss = p.grad_loss.contiguous();
    p.lse = p.lse.contiguous();
  }
  return p;
}

Tensor softplus_of_negative(const Tensor& x) { return (-x).clamp_min(0) + (-x.abs()).exp().log1p(); }

}  // namespace anatomy
