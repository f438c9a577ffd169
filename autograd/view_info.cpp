// Tracking views and regenerating their grad_fn from the base (Note [View + in-place] in
// view_info.h).
#include "anatomy/autograd/view_info.h"

#include "anatomy/autograd/accumulate_grad.h"
#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/autograd/grad_mode.h"

namespace anatomy::autograd {
namespace {

bool base_requires_grad(const Tensor& base) {
  const AutogradMeta* m = meta_or_null(base);
  return m != nullptr && (m->requires_grad_ || m->grad_fn_);
}

// A view's grad_fn made from its base's current history: the view is read out of the base as
// as_strided(view sizes, strides, offset). Only geometries are kept (PyTorch saves
// self_geometry too), so a later in-place change of the base does not invalidate it.
class AsStridedViewBackward final : public Node {
 public:
  AsStridedViewBackward(const Tensor& base, const Tensor& view)
      : Node({gradient_edge(base)}), base_(Geometry::of(base)), view_(Geometry::of(view)) {
    add_output(view);
  }
  std::string name() const override { return "AsStridedBackward0"; }
  variable_list apply(variable_list&& grads) override {
    if (!grads.at(0).defined()) return variable_list(1);
    return {as_strided_grad(grads[0], base_, view_)};
  }

 private:
  Geometry base_;
  Geometry view_;
};

// Makes `fn` the grad_fn of `m` (output 0), moving a retained gradient and the tensor's hooks
// over from the old one.
void replace_grad_fn(AutogradMeta& m, IntrusivePtr<Node> fn) {
  const IntrusivePtr<Node> old = std::move(m.grad_fn_);
  if (old && m.retains_grad_) old->remove_retained(&m);
  if (old && fn) {
    for (const auto& [nr, hook] : old->tensor_pre_hooks()) {
      if (nr == m.output_nr_) fn->add_tensor_pre_hook(0, hook);
    }
  }
  m.grad_fn_ = std::move(fn);
  m.output_nr_ = 0;
  if (m.grad_fn_ && m.retains_grad_) m.grad_fn_->add_retained(0, &m);
}

}  // namespace

void track_view(const DerivativeEntry& entry, const Tensor& input, const Tensor& out, uint32_t output_nr, bool multi) {
  if (!out.defined() || !is_floating(out.dtype()) || out.is_inference() || InferenceMode::is_enabled()) return;
  const AutogradMeta* in_meta = meta_or_null(input);
  const ViewInfo* in_view = in_meta ? in_meta->view_info_.get() : nullptr;
  // Every floating-point view is tracked, as PyTorch tracks every differentiable view, whether
  // or not its base requires grad: an in-place op with an operand that requires grad, on a view
  // of a base that does not, must still give the base a history (CopySlices).
  ViewCreation creation = multi ? ViewCreation::MultiOutput : ViewCreation::Default;
  if (!GradMode::is_enabled()) creation = ViewCreation::NoGradMode;
  auto info = std::make_unique<ViewInfo>();
  info->base = in_view ? in_view->base : input;
  info->creation = creation;
  info->creator = entry.node_name;
  info->output_nr = output_nr;
  // A plain view of a restricted view stays restricted (PyTorch's propagate_creation_meta).
  if (in_view && creation == ViewCreation::Default && in_view->creation != ViewCreation::Default) {
    info->creation = in_view->creation;
    info->creator = in_view->creator;
    info->output_nr = in_view->output_nr;
  }
  info->attr_version = out.version();
  meta_of(out).view_info_ = std::move(info);
}

void track_custom_function_view(const char* creator, const Tensor& input, const Tensor& out, uint32_t output_nr) {
  if (!out.defined() || !is_floating(out.dtype()) || out.is_inference() || InferenceMode::is_enabled()) return;
  const AutogradMeta* in_meta = meta_or_null(input);
  const ViewInfo* in_view = in_meta ? in_meta->view_info_.get() : nullptr;
  auto info = std::make_unique<ViewInfo>();
  info->base = in_view ? in_view->base : input;
  info->creation = ViewCreation::InCustomFunction;
  info->creator = creator;
  info->output_nr = output_nr;
  info->attr_version = out.version();
  meta_of(out).view_info_ = std::move(info);
}

bool view_needs_refresh(const ViewInfo& v) {
  return v.base.impl()->version() != v.attr_version && base_requires_grad(v.base);
}

void regenerate_view_grad_fn(const Tensor& view, AutogradMeta& m) {
  ViewInfo& v = *m.view_info_;
  IntrusivePtr<Node> fn;
  if (base_requires_grad(v.base)) {
    fn = IntrusivePtr<Node>(IntrusivePtr<AsStridedViewBackward>::make(v.base, view));
  }
  replace_grad_fn(m, std::move(fn));
  v.attr_version = view.version();
}

Tensor tracked_as_strided(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  Tensor view;
  {
    NoGradGuard no_grad;
    view = base.as_strided(sizes, strides, offset);
  }
  if (!base_requires_grad(base)) return view;
  AutogradMeta& m = meta_of(view);
  auto info = std::make_unique<ViewInfo>();
  info->base = base;
  info->creator = "AsStridedBackward0";
  m.view_info_ = std::move(info);
  regenerate_view_grad_fn(view, m);
  return view;
}

const IntrusivePtr<Node>& view_grad_fn(const Tensor& view, AutogradMeta& m) {
  const ViewInfo& v = *m.view_info_;
  if (v.attr_version != view.version() && (m.grad_fn_ || base_requires_grad(v.base))) regenerate_view_grad_fn(view, m);
  return m.grad_fn_;
}

}  // namespace anatomy::autograd
