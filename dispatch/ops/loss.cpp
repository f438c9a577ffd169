// The losses: schemas, dispatching functions and composites. mse_loss, l1_loss, smooth_l1_loss,
// nll_loss and cross_entropy_loss are composites differentiated through what they call
// (CompositeImplicitAutograd); cross_entropy's class-index path goes through the fused
// _cross_entropy_rows (dispatch/ops/cross_entropy_rows.cpp), which has its own derivative and
// CUDA kernels. binary_cross_entropy_with_logits is written with the stable formula and has its
// own derivative (autograd/derivatives_loss.cpp): differentiated through its pieces, a logit of
// exactly 0 (a zero-initialized last layer) would get a wrong gradient at |x|'s kink.
#include "anatomy/dispatch/ops/loss.h"

#include <cmath>
#include <vector>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/loss_rules.h"
#include "anatomy/dispatch/ops/print.h"

namespace anatomy {
namespace {

void check_reduction(const char* op, int64_t reduction) {
  ANATOMY_CHECK(reduction >= LossReduction::None && reduction <= LossReduction::Sum, ValueError,
                "{}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {}", op, reduction);
}

Tensor reduce_loss(const Tensor& loss, int64_t reduction) {
  if (reduction == LossReduction::Mean) return loss.mean();
  if (reduction == LossReduction::Sum) return loss.sum();
  return loss;
}

// The element-wise losses compare tensors that broadcast, of a floating promoted dtype.
Tensor difference(const char* op, const Tensor& self, const Tensor& target, int64_t reduction) {
  check_reduction(op, reduction);
  ANATOMY_CHECK(self.defined() && target.defined(), ValueError, "{}: input and target must be defined", op);
  ANATOMY_CHECK(is_floating(self.dtype()) && is_floating(target.dtype()), TypeError,
                "{}: input and target must be floating, got {} and {}", op, name(self.dtype()), name(target.dtype()));
  return naming_errors(op, [&] { return self - target; });
}

Tensor mse_loss_composite(const Tensor& self, const Tensor& target, int64_t reduction) {
  const Tensor d = difference("mse_loss", self, target, reduction);
  return reduce_loss(d * d, reduction);
}

Tensor l1_loss_composite(const Tensor& self, const Tensor& target, int64_t reduction) {
  return reduce_loss(difference("l1_loss", self, target, reduction).abs(), reduction);
}

Tensor smooth_l1_loss_composite(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  const char* op = "smooth_l1_loss";
  ANATOMY_CHECK(beta >= 0, ValueError, "{}: beta must not be negative, got {}", op, beta);
  const Tensor d = difference(op, self, target, reduction);
  if (beta == 0) return reduce_loss(d.abs(), reduction);
  const Tensor ad = d.abs();
  return reduce_loss(where(ad.lt(beta), d * d * (0.5 / beta), ad - 0.5 * beta), reduction);
}

// The class dim moved last and the rest flattened: (rows, C) logits and (rows) targets, and the
// shape a reduction='none' result has (the target's).
struct ClassRows {
  Tensor input, target;
  int64_t classes = 0;
};

// nll_loss's and cross_entropy's shape rules, PyTorch's: input (C) with a 0-dim target, (N, C)
// with (N), or (N, C, d1, ...) with (N, d1, ...).
ClassRows class_rows(const char* op, const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                     int64_t reduction) {
  check_reduction(op, reduction);
  ANATOMY_CHECK(self.defined() && target.defined(), ValueError, "{}: input and target must be defined", op);
  ANATOMY_CHECK(is_floating(self.dtype()), TypeError, "{}: input must be floating, got {}", op, name(self.dtype()));
  ANATOMY_CHECK(self.dim() >= 1, ValueError, "{}: input must have at least 1 dim (the classes), got a 0-dim tensor",
                op);
  ANATOMY_CHECK(target.dtype() == DType::Int64, TypeError, "{}: target must hold int64 class indices, got {}", op,
                name(target.dtype()));
  ANATOMY_CHECK(target.device() == self.device(), DeviceError, "{}: target is on {} but input is on {}", op,
                target.device().str(), self.device().str());
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  std::vector<int64_t> expected(self.sizes().begin(), self.sizes().end());
  expected.erase(expected.begin() + class_dim);
  ANATOMY_CHECK(target.sizes() == IntArrayRef(expected), ValueError,
                "{}: target of shape {} does not fit input of shape {} (expected target shape {})", op,
                shape_string(target.sizes()), shape_string(self.sizes()), shape_string(expected));
  ClassRows r;
  r.classes = self.size(class_dim);
  if (weight && weight->defined()) {
    ANATOMY_CHECK(weight->dim() == 1 && weight->size(0) == r.classes, ValueError,
                  "{}: weight must be 1-D with one value per class ({} classes), got shape {}", op, r.classes,
                  shape_string(weight->sizes()));
    ANATOMY_CHECK(is_floating(weight->dtype()), TypeError, "{}: weight must be floating, got {}", op,
                  name(weight->dtype()));
    ANATOMY_CHECK(weight->device() == self.device(), DeviceError, "{}: weight is on {} but input is on {}", op,
                  weight->device().str(), self.device().str());
  }
  r.input = self.dim() == 1 ? self.unsqueeze(0) : self.movedim(1, -1).reshape({-1, r.classes});
  r.target = target.reshape({-1});
  return r;
}

// The weight of each row's target, 0 where it is ignore_index (the mean's denominator sums them).
Tensor target_weights(const Tensor& target, const Tensor& ignored, const std::optional<Tensor>& weight, DType dtype) {
  if (!weight || !weight->defined()) return ignored.logical_not().to(dtype);
  return where(ignored, 0.0, index_select(*weight, 0, where(ignored, 0, target)).to(dtype));
}

Tensor nll_loss_composite(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                          int64_t reduction, int64_t ignore_index) {
  const char* op = "nll_loss";
  const ClassRows r = class_rows(op, self, target, weight, reduction);
  return naming_errors(op, [&] {
    const Tensor ignored = r.target.eq(ignore_index);
    const Tensor picked = gather(r.input, 1, where(ignored, 0, r.target).unsqueeze(1)).squeeze(1);
    const Tensor w = target_weights(r.target, ignored, weight, self.dtype());
    const Tensor loss = -(picked * w);
    if (reduction == LossReduction::None) return loss.reshape(target.sizes());
    if (reduction == LossReduction::Sum) return loss.sum();
    return loss.sum() / w.sum();
  });
}

// Class probabilities (target shaped as the input): -sum_c w_c t_c log_softmax(x)_c, the mean
// over the elements other than the class dim (PyTorch's, which does not divide by the weights).
Tensor cross_entropy_probabilities(const char* op, const Tensor& self, const Tensor& target,
                                   const std::optional<Tensor>& weight, int64_t reduction, double label_smoothing) {
  check_reduction(op, reduction);
  ANATOMY_CHECK(is_floating(self.dtype()), TypeError, "{}: input must be floating, got {}", op, name(self.dtype()));
  ANATOMY_CHECK(target.device() == self.device(), DeviceError, "{}: target is on {} but input is on {}", op,
                target.device().str(), self.device().str());
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const int64_t classes = self.size(class_dim);
  if (weight && weight->defined()) {
    ANATOMY_CHECK(weight->dim() == 1 && weight->size(0) == classes, ValueError,
                  "{}: weight must be 1-D with one value per class ({} classes), got shape {}", op, classes,
                  shape_string(weight->sizes()));
    ANATOMY_CHECK(weight->device() == self.device(), DeviceError, "{}: weight is on {} but input is on {}", op,
                  weight->device().str(), self.device().str());
  }
  return naming_errors(op, [&] {
    const Tensor logp = log_softmax(self, class_dim);
    Tensor t = target;
    if (label_smoothing > 0) t = target * (1.0 - label_smoothing) + label_smoothing / static_cast<double>(classes);
    Tensor terms = logp * t;
    if (weight && weight->defined()) {
      std::vector<int64_t> shape(static_cast<size_t>(self.dim()), 1);
      shape[class_dim] = classes;
      terms = terms * weight->reshape(shape);
    }
    if (reduction == LossReduction::None) return -terms.sum({class_dim});
    if (reduction == LossReduction::Sum) return -terms.sum();
    const int64_t elements = classes == 0 ? 0 : self.numel() / classes;
    return -terms.sum() / static_cast<double>(elements);
  });
}

Tensor cross_entropy_composite(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                               int64_t reduction, int64_t ignore_index, double label_smoothing) {
  const char* op = "cross_entropy";
  ANATOMY_CHECK(self.defined() && target.defined(), ValueError, "{}: input and target must be defined", op);
  ANATOMY_CHECK(std::isfinite(label_smoothing) && label_smoothing >= 0.0 && label_smoothing <= 1.0, ValueError,
                "{}: label_smoothing must be between 0.0 and 1.0, got {}", op, label_smoothing);
  if (self.sizes() == target.sizes() && self.dim() >= 1) {
    ANATOMY_CHECK(is_floating(target.dtype()), TypeError,
                  "{}: a target of the input's shape holds class probabilities and must be floating, got {}", op,
                  name(target.dtype()));
    ANATOMY_CHECK(ignore_index < 0, ValueError,
                  "{}: ignore_index ({}) applies to class indices, not to a target of probabilities", op, ignore_index);
    return cross_entropy_probabilities(op, self, target, weight, reduction, label_smoothing);
  }
  const ClassRows r = class_rows(op, self, target, weight, reduction);
  return naming_errors(op, [&] {
    const Tensor loss = std::get<0>(_cross_entropy_rows(r.input, r.target, weight, ignore_index, label_smoothing));
    if (reduction == LossReduction::None) return loss.reshape(target.sizes()).to(self.dtype());
    if (reduction == LossReduction::Sum) return loss.sum().to(self.dtype());
    const Tensor ignored = r.target.eq(ignore_index);
    return (loss.sum() / target_weights(r.target, ignored, weight, loss.dtype()).sum()).to(self.dtype());
  });
}

// The stable form: (1 - t) x + lw (max(-x, 0) + log1p(exp(-|x|))), lw = 1 + (pos_weight - 1) t.
Tensor binary_cross_entropy_with_logits_composite(const Tensor& self, const Tensor& target,
                                                  const std::optional<Tensor>& weight,
                                                  const std::optional<Tensor>& pos_weight, int64_t reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  check_reduction(op, reduction);
  ANATOMY_CHECK(self.defined() && target.defined(), ValueError, "{}: input and target must be defined", op);
  ANATOMY_CHECK(is_floating(self.dtype()) && is_floating(target.dtype()), TypeError,
                "{}: input and target must be floating, got {} and {}", op, name(self.dtype()), name(target.dtype()));
  ANATOMY_CHECK(self.sizes() == target.sizes(), ValueError, "{}: target size {} must be the same as input size {}", op,
                shape_string(target.sizes()), shape_string(self.sizes()));
  return naming_errors(op, [&] {
    // fp16 and bf16 compute in fp32 and round once: for large |x| the two terms nearly cancel.
    const DType result = promote_types(self.dtype(), target.dtype());
    const DType acc = result == DType::Float64 ? DType::Float64 : DType::Float32;
    const Tensor x = self.to(acc), t = target.to(acc);
    const Tensor softplus_neg = softplus_of_negative(x);
    Tensor loss = (1.0 - t) * x;
    if (pos_weight && pos_weight->defined()) loss = loss + (1.0 + (pos_weight->to(acc) - 1.0) * t) * softplus_neg;
    else loss = loss + softplus_neg;
    if (weight && weight->defined()) loss = loss * weight->to(acc);
    ANATOMY_CHECK(loss.sizes() == self.sizes(), ValueError,
                  "{}: weight and pos_weight must broadcast to the input's shape {}, which they widen to {}", op,
                  shape_string(self.sizes()), shape_string(loss.sizes()));
    return reduce_loss(loss, reduction).to(result);
  });
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", ANATOMY_KERNEL(mse_loss_composite));
  m.def("l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", ANATOMY_KERNEL(l1_loss_composite));
  m.def("smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor",
        ANATOMY_KERNEL(smooth_l1_loss_composite));
  m.def("nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> Tensor",
        ANATOMY_KERNEL(nll_loss_composite));
  m.def(
      "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100, "
      "float label_smoothing=0.0) -> Tensor",
      ANATOMY_KERNEL(cross_entropy_composite));
  m.def(
      "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, "
      "int reduction=1) -> Tensor");
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("binary_cross_entropy_with_logits", ANATOMY_KERNEL(binary_cross_entropy_with_logits_composite));
}

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  ANATOMY_OP(op, "aten::mse_loss", Tensor(const Tensor&, const Tensor&, int64_t));
  return op.call(self, target, reduction);
}
Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  ANATOMY_OP(op, "aten::l1_loss", Tensor(const Tensor&, const Tensor&, int64_t));
  return op.call(self, target, reduction);
}
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  ANATOMY_OP(op, "aten::smooth_l1_loss", Tensor(const Tensor&, const Tensor&, int64_t, double));
  return op.call(self, target, reduction, beta);
}
Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                int64_t ignore_index) {
  ANATOMY_OP(op, "aten::nll_loss",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t, int64_t));
  return op.call(self, target, weight, reduction, ignore_index);
}
Tensor cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                     int64_t ignore_index, double label_smoothing) {
  ANATOMY_OP(op, "aten::cross_entropy_loss",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t, int64_t, double));
  return op.call(self, target, weight, reduction, ignore_index, label_smoothing);
}
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, int64_t reduction) {
  ANATOMY_OP(op, "aten::binary_cross_entropy_with_logits",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&, int64_t));
  return op.call(self, target, weight, pos_weight, reduction);
}

}  // namespace anatomy
