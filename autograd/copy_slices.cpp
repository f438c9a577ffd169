// CopySlices and the rebasing of a view's history (see copy_slices.h).
#include "anatomy/autograd/copy_slices.h"

#include <fmt/format.h>

#include "anatomy/autograd/accumulate_grad.h"
#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/view_info.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::autograd {

CopySlices::CopySlices(const Tensor& base, const Tensor& view, IntrusivePtr<Node> fn)
    : Node({gradient_edge(base)}), base_(Geometry::of(base)), view_(Geometry::of(view)), fn_(std::move(fn)) {
  add_output(base);
  for (size_t i = 1; i < fn_->next_edges().size(); ++i) next_edges_.push_back(fn_->next_edges()[i]);
  if (!fn_->forward_op().empty()) set_forward_op(fn_->forward_op());
}

variable_list CopySlices::apply(variable_list&& grads) {
  variable_list out(next_edges().size());
  const Tensor& grad = grads.at(0);
  if (!grad.defined()) return out;
  // A copy of the gradient laid out as the base, so the view's strides and offset address
  // the same elements in it as in the base.
  Tensor result = empty_strided(base_.sizes, base_.strides, grad.options());
  result.copy_(grad);
  const Tensor grad_slice = tracked_as_strided(result, view_.sizes, view_.strides, view_.offset - base_.offset);
  variable_list res = fn_->apply({grad_slice.clone(MemoryFormat::Contiguous)});
  if (next_edges()[0].is_valid()) {
    // An undefined gradient for the view's old value (fill_, copy_) means zero: it was overwritten.
    if (res.at(0).defined()) {
      grad_slice.copy_(res[0]);
    } else {
      grad_slice.zero_();
    }
    out[0] = std::move(result);
  }
  for (size_t i = 1; i < out.size() && i < res.size(); ++i) out[i] = std::move(res[i]);
  return out;
}

void CopySlices::release_saved() {
  if (fn_) fn_->release_saved();
}

std::vector<std::string> CopySlices::saved_descriptions() const {
  std::vector<std::string> lines;
  if (!fn_) return lines;
  lines.push_back(fmt::format("wraps {} on a view [{}] at offset {}", fn_->name(), fmt::join(view_.sizes, ", "),
                              view_.offset - base_.offset));
  for (const std::string& s : fn_->saved_descriptions()) lines.push_back(fn_->name() + " " + s);
  return lines;
}

void CopySlices::release_owned_nodes(std::vector<IntrusivePtr<Node>>& sole_owned) {
  if (fn_ && fn_.use_count() == 1) sole_owned.push_back(std::move(fn_));
  fn_ = IntrusivePtr<Node>();
}

void check_inplace_on_view(const AutogradMeta& view_meta, std::string_view op) {
  const ViewInfo& v = *view_meta.view_info_;
  ANATOMY_CHECK(v.creation != ViewCreation::NoGradMode, ValueError,
                "{}: A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given "
                "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
                "both the view and the inplace either both inside the no_grad block (if you don't want the inplace to "
                "be tracked) or both outside (if you want the inplace to be tracked).",
                op);
  ANATOMY_CHECK(v.creation != ViewCreation::MultiOutput, ValueError,
                "{}: Output {} of {} is a view and is being modified inplace. This view is the output of a function "
                "that returns multiple views. Such functions do not allow the output views to be modified inplace. You "
                "should replace the inplace operation by an out-of-place one.",
                op, v.output_nr, v.creator);
  ANATOMY_CHECK(v.creation != ViewCreation::InCustomFunction, ValueError,
                "{}: Output {} of {} is a view and is being modified inplace. This view was created inside a custom "
                "Function (or because an input was returned as-is) and the autograd logic to handle view+inplace "
                "would override the custom backward associated with the custom Function, leading to incorrect "
                "gradients. This behavior is forbidden. You can fix this by cloning the output of the custom "
                "Function.",
                op, v.output_nr, v.creator);
  const AutogradMeta* base = meta_or_null(v.base);
  ANATOMY_CHECK(!(base && base->requires_grad_ && !base->grad_fn_), ValueError,
                "{}: a view of a leaf Variable that requires grad is being used in an in-place operation.", op);
}

void rebase_view_history(const Tensor& view, const IntrusivePtr<Node>& fn) {
  AutogradMeta& m = meta_of(view);
  const Tensor base = m.view_info_->base;
  auto copy_slices = IntrusivePtr<CopySlices>::make(base, view, fn);
  AutogradMeta& bm = meta_of(base);
  if (bm.grad_fn_ && bm.retains_grad_) bm.grad_fn_->remove_retained(&bm);
  bm.grad_fn_ = IntrusivePtr<Node>(std::move(copy_slices));
  bm.output_nr_ = 0;
  if (bm.retains_grad_) bm.grad_fn_->add_retained(0, &bm);
  regenerate_view_grad_fn(view, m);
}

}  // namespace anatomy::autograd
