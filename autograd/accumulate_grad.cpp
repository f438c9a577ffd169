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

namespace {

// Only this handle refers to the tensor and its storage (no view of it, no other gradient), it
// has no autograd history, and it is laid out densely like a fresh clone would be.
bool is_unshared_plain_tensor(const Tensor& t) {
  if (t.use_count() != 1 || !t.storage() || t.storage().use_count() != 1) return false;
  if (!t.is_contiguous() || t.storage_offset() != 0) return false;
  const AutogradMeta* meta = meta_or_null(t);
  return meta == nullptr || (!meta->grad_fn_ && !meta->requires_grad_);
}

}  // namespace

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
    // to both inputs), so .grad gets its own copy unless a graph is being built through it, or
    // nothing else can see the gradient (PyTorch "steals" it too): then it becomes .grad as is.
    if (GradMode::is_enabled()) {
      m.grad_ = g;
    } else if (is_unshared_plain_tensor(g)) {
      m.grad_ = std::move(g);
    } else {
      m.grad_ = detach(g).clone();
    }
  } else {
    // Out of place: the old .grad may be shared with another gradient or be part of a graph.
    m.grad_ = m.grad_ + g;
  }
  return {};
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = meta_or_null(t);
  if (m == nullptr) return {};
  if (m->view_info_) {
    if (const IntrusivePtr<Node>& fn = view_grad_fn(t, *m)) return {fn, m->output_nr_};
  }
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
