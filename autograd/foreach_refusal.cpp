// The multi-tensor operators (dispatch/ops/foreach.h) have no derivative: clip_grad_norm_ calls
// them under no-grad. A call in grad mode whose tensors require grad raises NotImplementedError
// naming the operator, where a fallthrough would return norms without history or scale a leaf
// behind autograd's back; any other call passes through to the backend after one check per
// tensor.
#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::autograd {
namespace {

bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = meta_or_null(t);
  return m != nullptr && m->requires_grad();
}

void refuse_if_recording(const char* op, TensorList tensors, const Tensor* other = nullptr) {
  if (!GradMode::is_enabled()) return;
  bool grad = other != nullptr && requires_grad(*other);
  for (const Tensor& t : tensors) grad = grad || requires_grad(t);
  ANATOMY_CHECK(!grad, NotImplementedError,
                "{}: records no history, but a tensor requires grad: call it under no-grad (NoGradGuard)", op);
}

constexpr DispatchKeySet below_autograd(DispatchKeySet ks) {
  return ks & DispatchKeySet::below(DispatchKey::AutogradCPU);
}

std::vector<Tensor> foreach_norm_autograd(DispatchKeySet ks, TensorList self, double ord) {
  static const auto op = dispatch::Dispatcher::singleton()
                             .find_or_throw("aten::_foreach_norm.Scalar")
                             .typed<std::vector<Tensor>(TensorList, double)>();
  refuse_if_recording("aten::_foreach_norm.Scalar", self);
  return op.redispatch(below_autograd(ks), self, ord);
}

void foreach_mul_autograd(DispatchKeySet ks, TensorList self, const Tensor& other) {
  static const auto op = dispatch::Dispatcher::singleton()
                             .find_or_throw("aten::_foreach_mul_.Tensor")
                             .typed<void(TensorList, const Tensor&)>();
  refuse_if_recording("aten::_foreach_mul_.Tensor", self, &other);
  op.redispatch(below_autograd(ks), self, other);
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  m.impl("_foreach_norm.Scalar", dispatch::named_kernel(&foreach_norm_autograd, "foreach_norm_autograd"));
  m.impl("_foreach_mul_.Tensor", dispatch::named_kernel(&foreach_mul_autograd, "foreach_mul_autograd"));
}

}  // namespace anatomy::autograd
