// AutogradMeta: what autograd keeps on a tensor: whether a leaf requires grad, its accumulated
// .grad, the node that made it (grad_fn) and which of that node's outputs it is, hooks, and,
// for a view, its ViewInfo (autograd/view_info.h).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "anatomy/autograd/node.h"
#include "anatomy/autograd/view_info.h"
#include "anatomy/core/tensor_impl.h"

namespace anatomy::autograd {

class AccumulateGrad;

class AutogradMeta final : public AutogradMetaInterface {
 public:
  ~AutogradMeta() override;

  // A view with no grad_fn may need one after its base changed (Note [View + in-place]); only
  // such views pay for the third test.
  bool requires_grad() const override {
    return requires_grad_ || grad_fn_ || (view_info_ && view_needs_refresh(*view_info_));
  }
  // ValueError when turning it off on a non-leaf (its grad_fn decides).
  void set_requires_grad(bool value) override;
  std::string grad_fn_name() const override { return grad_fn_ ? grad_fn_->name() : std::string(); }

  // Leaves: the user's flag. Non-leaves require grad because they have a grad_fn.
  bool requires_grad_ = false;
  Tensor grad_;
  IntrusivePtr<Node> grad_fn_;
  uint32_t output_nr_ = 0;
  // retain_grad() on a non-leaf: the node fills grad_ (Node::add_retained).
  bool retains_grad_ = false;
  // Hooks of a leaf, run by its AccumulateGrad before accumulating (a non-leaf's hooks live
  // on its grad_fn).
  std::vector<TensorHook> leaf_hooks_;
  // The leaf's AccumulateGrad while one exists: a plain pointer, cleared by the node's
  // destructor (Note [Autograd graph ownership]). Read and written under mutex_, as is grad_
  // while a backward accumulates into it: threads that share a leaf record and run their graphs
  // at the same time (docs/autograd.md, "Threads").
  AccumulateGrad* accumulator_ = nullptr;
  std::recursive_mutex mutex_;  // recursive: accumulating under it may record an op on the leaf itself
  // Set on the outputs of view operators (Note [View + in-place] in view_info.h).
  std::unique_ptr<ViewInfo> view_info_;
};

// The metadata of `t`, made on first use.
AutogradMeta& meta_of(const Tensor& t);
// The metadata of `t`, or nullptr.
inline AutogradMeta* meta_or_null(const Tensor& t) {
  return t.defined() ? static_cast<AutogradMeta*>(t.impl()->autograd_meta()) : nullptr;
}

}  // namespace anatomy::autograd
