// AutogradMeta (see autograd_meta.h), and the factory core uses to make it.
#include "anatomy/autograd/autograd_meta.h"

namespace anatomy::autograd {
namespace {

std::unique_ptr<AutogradMetaInterface> make_autograd_meta() { return std::make_unique<AutogradMeta>(); }

const bool registered = [] {
  set_autograd_meta_factory(&make_autograd_meta);
  return true;
}();

}  // namespace

AutogradMeta::~AutogradMeta() {
  if (retains_grad_ && grad_fn_) grad_fn_->remove_retained(this);
}

void AutogradMeta::set_requires_grad(bool value) {
  ANATOMY_CHECK(value || !grad_fn_, ValueError,
                "requires_grad_: you can only change requires_grad flags of leaf tensors; use detach() to get a "
                "tensor that does not require grad");
  requires_grad_ = value;
}

AutogradMeta& meta_of(const Tensor& t) {
  TensorImpl* impl = t.impl();
  if (impl->autograd_meta() == nullptr) impl->set_autograd_meta(std::make_unique<AutogradMeta>());
  return *static_cast<AutogradMeta*>(impl->autograd_meta());
}

}  // namespace anatomy::autograd
