// AutogradMeta: what autograd keeps on a tensor. For now whether it requires grad; the graph
// node (grad_fn), the accumulated .grad and hooks join it with the autograd engine.
#pragma once

#include <string>

#include "anatomy/core/tensor_impl.h"

namespace anatomy::autograd {

class AutogradMeta final : public AutogradMetaInterface {
 public:
  bool requires_grad() const override { return requires_grad_; }
  void set_requires_grad(bool value) override { requires_grad_ = value; }
  std::string grad_fn_name() const override { return {}; }

 private:
  bool requires_grad_ = false;
};

}  // namespace anatomy::autograd
