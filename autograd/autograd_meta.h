// AutogradMeta: what autograd keeps on a tensor: whether a leaf requires grad, its accumulated
// .grad, the node that made it (grad_fn) and which of that node's outputs it is, hooks, and
// whether it is a view (in-place changes through views are refused for now; see
// docs/autograd.md).
#pragma once

#include <string>
#include <vector>

#include "anatomy/autograd/node.h"
#include "anatomy/core/tensor_impl.h"

namespace anatomy::autograd {

class AccumulateGrad;

class AutogradMeta final : public AutogradMetaInterface {
 public:
  ~AutogradMeta() override;

  bool requires_grad() const override { return requires_grad_ || grad_fn_; }
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
  // destructor (Note [Autograd graph ownership]).
  AccumulateGrad* accumulator_ = nullptr;
  // Made by a view operator from an input that required grad.
  bool is_view_ = false;
};

// The metadata of `t`, made on first use.
AutogradMeta& meta_of(const Tensor& t);
// The metadata of `t`, or nullptr.
inline AutogradMeta* meta_or_null(const Tensor& t) {
  return t.defined() ? static_cast<AutogradMeta*>(t.impl()->autograd_meta()) : nullptr;
}

}  // namespace anatomy::autograd
