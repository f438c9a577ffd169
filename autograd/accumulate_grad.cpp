// AccumulateGrad (see accumulate_grad.h).
#include "anatomy/autograd/accumulate_grad.h"

#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/autograd/saved_tensor.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::autograd {

AccumulateGrad::AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) { add_output(leaf_); }

AccumulateGrad::~AccumulateGrad() {
  if (AutogradMeta* m = meta_or_null(leaf_); m && m->accumulator_ == this) m->accumulator_ = nullptr;
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor g = std::move(grads.at(0));
  AutogradMeta& m = meta_of(leaf_);
  for (const TensorHook& hook : m.leaf_hooks_) {
    if (!g.defined()) break;
    if (Tensor replaced = hook(g); replaced.defined()) g = std::move(replaced);
  }
  if (!g.defined()) return {};
  if (!m.grad_.defined()) {
    // The incoming gradient may be shared with other tensors' gradients (add passes one tensor
    // to both inputs), so .grad gets its own copy unless a graph is being built through it.
    m.grad_ = GradMode::is_enabled() ? g : detach(g).clone();
  } else {
    // Out of place: the old .grad may be shared with another gradient or be part of a graph.
    m.grad_ = m.grad_ + g;
  }
  return {};
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = meta_or_null(t);
  if (m == nullptr) return {};
  if (m->grad_fn_) return {m->grad_fn_, m->output_nr_};
  if (!m->requires_grad_) return {};
  if (m->accumulator_ == nullptr) {
    auto node = IntrusivePtr<AccumulateGrad>::make(t);
    m->accumulator_ = node.get();
    return {IntrusivePtr<Node>(std::move(node)), 0};
  }
  return {IntrusivePtr<Node>(m->accumulator_), 0};
}

}  // namespace anatomy::autograd
