// AccumulateGrad (see accumulate_grad.h).
#include "anatomy/autograd/accumulate_grad.h"

#include <fmt/format.h>

#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/autograd/saved_tensor.h"
#include "anatomy/autograd/validate_gradient.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::autograd {

AccumulateGrad::AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) { add_output(leaf_); }

AccumulateGrad::~AccumulateGrad() {
  if (AutogradMeta* m = meta_or_null(leaf_)) {
    std::lock_guard<std::recursive_mutex> lock(m->mutex_);
    if (m->accumulator_ == this) m->accumulator_ = nullptr;
  }
}

namespace {

bool has_no_history(const Tensor& t) {
  const AutogradMeta* meta = meta_or_null(t);
  return meta == nullptr || (!meta->grad_fn_ && !meta->requires_grad_);
}

// PyTorch's gradient layout contract (obeys_layout_contract): .grad has the leaf's strides where
// the leaf is dense (a channels_last parameter gets a channels_last .grad), else it is
// contiguous. Strides of size-1 dims do not count, but a 0 stride there (a broadcast view) does.
bool obeys_layout_contract(const Tensor& grad, const Tensor& leaf) {
  if (!leaf.is_non_overlapping_and_dense()) return grad.is_contiguous();
  if (grad.sizes() != leaf.sizes()) return false;
  for (int64_t d = 0; d < grad.dim(); ++d) {
    const int64_t stride = grad.strides()[d];
    if (grad.sizes()[d] != 1 ? stride != leaf.strides()[d] : stride == 0) return false;
  }
  return true;
}

// A copy of the gradient that obeys the layout contract (PyTorch's clone_obey_contract).
Tensor clone_obey_contract(const Tensor& grad, const Tensor& leaf) {
  if (!leaf.is_non_overlapping_and_dense()) return grad.clone(MemoryFormat::Contiguous);
  Tensor out = empty_strided(leaf.sizes(), leaf.strides(), grad.options());
  out.copy_(grad);
  return out;
}

// Whether nothing but this handle can see the gradient, so .grad may take its storage as is:
// the tensor has one handle and no autograd history, is laid out densely from the start of its
// storage as a fresh clone would be, in the layout the contract asks for, and shares the storage
// with nobody, except with the base of its view (Note [View + in-place]: every floating-point
// view keeps its root base) when only that view holds the base. A backward formula's views
// (`mat1.t().mm(g).t()`) come this way.
bool is_unshared_gradient(const Tensor& t, const Tensor& leaf) {
  if (t.use_count() != 1 || !t.storage() || !has_no_history(t)) return false;
  if (!obeys_layout_contract(t, leaf) || t.storage_offset() != 0) return false;
  long storage_users = 1;
  const AutogradMeta* meta = meta_or_null(t);
  if (meta != nullptr && meta->view_info_) {
    const Tensor& base = meta->view_info_->base;
    if (base.use_count() != 1 || !has_no_history(base) || base.storage().get() != t.storage().get()) return false;
    storage_users = 2;
  }
  return t.storage().use_count() == storage_users;
}

// Whether .grad may take the next gradient in place: it has no autograd history, is dense (in
// the layout the contract gave it), and nothing but this handle sees its storage (not a gradient
// given to two leaves, not a seed the caller holds, not a tensor a graph saved).
bool is_private_grad(const Tensor& grad) {
  return grad.use_count() == 1 && has_no_history(grad) && grad.is_non_overlapping_and_dense() && grad.storage() &&
         grad.storage().use_count() == 1;
}

}  // namespace

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor g = std::move(grads.at(0));
  AutogradMeta& m = meta_of(leaf_);
  // A copy of each hook, by index, over the hooks there were: a hook may register another one,
  // which runs from the next backward on.
  for (size_t i = 0, n = m.leaf_hooks_.size(); i < n && g.defined(); ++i) {
    const TensorHook hook = m.leaf_hooks_[i];
    Tensor replaced = hook(g);
    if (!replaced.defined()) continue;
    if (!fits(replaced, outputs()[0])) {
      replaced = validated_gradient(std::move(replaced), outputs()[0], fmt::format("hook {} of a leaf", i), 0);
    }
    g = std::move(replaced);
  }
  if (!g.defined()) return {};
  // Threads whose graphs share this leaf may run their backward at the same time.
  std::lock_guard<std::recursive_mutex> lock(m.mutex_);
  if (!m.grad_.defined()) {
    // The incoming gradient may be shared with other tensors' gradients (add passes one tensor
    // to both inputs), so .grad gets its own copy unless a graph is being built through it, or
    // nothing else can see the gradient (PyTorch "steals" it too): then it becomes .grad as is.
    if (GradMode::is_enabled()) {
      // Building a graph (create_graph): .grad keeps the gradient's history; a copy into the
      // contract's layout records one too.
      m.grad_ = obeys_layout_contract(g, leaf_) ? g : clone_obey_contract(g, leaf_);
    } else if (is_unshared_gradient(g, leaf_)) {
      // A view becomes a plain tensor over the same storage; its base goes with `g`.
      const AutogradMeta* gm = meta_or_null(g);
      m.grad_ = gm != nullptr && gm->view_info_ ? detach(g) : std::move(g);
    } else {
      m.grad_ = clone_obey_contract(detach(g), leaf_);
    }
  } else if (!GradMode::is_enabled() && is_private_grad(m.grad_)) {
    // In place, as PyTorch's first-order `grad += new_grad`: .grad keeps its memory, which a
    // captured optimizer step reads on every replay (docs/cuda-graphs.md), and nothing is allocated.
    m.grad_.add_(g);
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
  // Under the leaf's lock, as ~AccumulateGrad clears the pointer (Note [Weak references]): an
  // accumulator whose last reference is going away is replaced, never revived.
  std::lock_guard<std::recursive_mutex> lock(m->mutex_);
  if (m->accumulator_ != nullptr) {
    if (IntrusivePtr<Node> live = IntrusivePtr<Node>::try_retain(m->accumulator_)) return {std::move(live), 0};
  }
  auto node = IntrusivePtr<AccumulateGrad>::make(t);
  m->accumulator_ = node.get();
  return {IntrusivePtr<Node>(std::move(node)), 0};
}

}  // namespace anatomy::autograd
