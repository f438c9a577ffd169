// CopySlices: the grad_fn a base gets when an in-place op modifies one of its views (Note
// [View + in-place] in view_info.h), and the checks and rebasing that install it.
//
// It wraps the in-place op's own node `fn`. Given the base's gradient, it passes the slice that
// the view covers (as_strided of a copy of the gradient, with the view's geometry relative to
// the base) through fn, writes fn's gradient for the view's old value back into that slice,
// and sends the whole to the base's previous history; fn's gradients for its other inputs go
// to their histories unchanged. Its next edges are the base's previous edge, then fn's edges
// 1.. (fn's edge 0, the view's old history, is superseded by the base's).
#pragma once

#include <string_view>

#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/autograd/node.h"

namespace anatomy::autograd {

class AutogradMeta;

class CopySlices final : public Node {
 public:
  // Takes `base`'s current gradient edge: call before the base's grad_fn changes.
  CopySlices(const Tensor& base, const Tensor& view, IntrusivePtr<Node> fn);

  std::string name() const override { return "CopySlices"; }
  variable_list apply(variable_list&& grads) override;
  void release_saved() override;
  std::vector<std::string> saved_descriptions() const override;
  void release_owned_nodes(std::vector<IntrusivePtr<Node>>& sole_owned) override;

 private:
  Geometry base_;
  Geometry view_;
  IntrusivePtr<Node> fn_;
};

// The errors PyTorch raises before an in-place op `op` on a view records (ValueError): a view
// made in no_grad mode, an output of a multi-output view op, a view of a leaf that requires grad.
void check_inplace_on_view(const AutogradMeta& view_meta, std::string_view op);

// After the in-place op's node `fn` became the view's grad_fn: the base's grad_fn becomes a
// CopySlices wrapping fn, and the view's grad_fn is regenerated from the base.
void rebase_view_history(const Tensor& view, const IntrusivePtr<Node>& fn);

}  // namespace anatomy::autograd
