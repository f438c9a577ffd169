// AccumulateGrad: the node at the end of every path to a leaf that requires grad. It runs the
// leaf's hooks and adds the gradient into leaf.grad (or sets it the first time).
#pragma once

#include "anatomy/autograd/node.h"

namespace anatomy::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);
  ~AccumulateGrad() override;

  std::string name() const override { return "AccumulateGrad"; }
  variable_list apply(variable_list&& grads) override;
  const Tensor& leaf() const { return leaf_; }

 private:
  Tensor leaf_;
};

// The edge a gradient for `t` flows into: its grad_fn's output, the AccumulateGrad of a leaf
// that requires grad (made once and shared while it lives), or an invalid edge.
Edge gradient_edge(const Tensor& t);

}  // namespace anatomy::autograd
