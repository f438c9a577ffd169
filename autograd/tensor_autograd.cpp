// Tensor's autograd methods (declared in core/tensor.h) and the public API of autograd.h.
#include <fmt/format.h>

#include "anatomy/autograd/accumulate_grad.h"
#include "anatomy/autograd/autograd.h"
#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/engine.h"
#include "anatomy/autograd/saved_tensor.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {

Tensor Tensor::grad() const {
  const autograd::AutogradMeta* m = autograd::meta_or_null(*this);
  return m ? m->grad_ : Tensor();
}

void Tensor::set_grad(const Tensor& g) const {
  if (g.defined()) {
    ANATOMY_CHECK(g.sizes() == sizes() && g.dtype() == dtype() && g.device() == device(), ValueError,
                  "set_grad: the gradient must match the tensor: got [{}] {} on {}, expected [{}] {} on {}",
                  fmt::join(g.sizes(), ", "), name(g.dtype()), g.device().str(), fmt::join(sizes(), ", "),
                  name(dtype()), device().str());
  }
  autograd::meta_of(*this).grad_ = g;
}

void Tensor::set_data(const Tensor& new_data) const {
  ANATOMY_CHECK(defined() && new_data.defined(), ValueError, "set_data: {} is undefined",
                defined() ? "the new data" : "the tensor");
  autograd::AutogradMeta* m = autograd::meta_or_null(*this);
  ANATOMY_CHECK(m == nullptr || !m->view_info_, ValueError,
                "set_data: the tensor is a view, whose data is its base's; set the base's data, or a clone's");
  ANATOMY_CHECK(!(m != nullptr && m->requires_grad_) || is_floating(new_data.dtype()), TypeError,
                "set_data: a tensor that requires grad takes floating-point data only, got {}", name(new_data.dtype()));
  const bool same_kind = new_data.sizes() == sizes() && new_data.dtype() == dtype() && new_data.device() == device();
  impl()->replace_data(*new_data.impl());
  if (m != nullptr && !same_kind) {
    // The leaf's accumulator checks gradients against the old data's sizes, dtype and device: a
    // graph recorded before keeps it, and the next one makes its own.
    std::lock_guard<std::recursive_mutex> lock(m->mutex_);
    m->accumulator_ = nullptr;
  }
}

autograd::Node* Tensor::grad_fn() const {
  autograd::AutogradMeta* m = autograd::meta_or_null(*this);
  if (m && m->view_info_) return autograd::view_grad_fn(*this, *m).get();
  return m ? m->grad_fn_.get() : nullptr;
}

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }

void Tensor::retain_grad() const {
  ANATOMY_CHECK(requires_grad(), ValueError,
                "retain_grad: can't retain the gradient of a tensor that does not "
                "require grad");
  autograd::AutogradMeta& m = autograd::meta_of(*this);
  if (m.view_info_) autograd::view_grad_fn(*this, m);
  if (!m.grad_fn_ || m.retains_grad_) return;  // a leaf keeps its .grad anyway
  m.retains_grad_ = true;
  m.grad_fn_->add_retained(m.output_nr_, &m);
}

bool Tensor::retains_grad() const {
  const autograd::AutogradMeta* m = autograd::meta_or_null(*this);
  return m != nullptr && m->retains_grad_;
}

Tensor Tensor::detach() const { return autograd::detach(*this); }

const Tensor& Tensor::detach_() const {
  if (autograd::AutogradMeta* m = autograd::meta_or_null(*this)) {
    if (m->retains_grad_ && m->grad_fn_) m->grad_fn_->remove_retained(m);
    m->retains_grad_ = false;
    m->grad_fn_ = IntrusivePtr<autograd::Node>();
    m->requires_grad_ = false;
    m->view_info_.reset();
  }
  return *this;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
  autograd::backward({*this}, gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{}, retain_graph,
                     create_graph);
}

void Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  ANATOMY_CHECK(requires_grad(), ValueError,
                "register_hook: can't register a hook on a tensor that doesn't "
                "require grad");
  autograd::AutogradMeta& m = autograd::meta_of(*this);
  if (m.view_info_) autograd::view_grad_fn(*this, m);
  if (m.grad_fn_) {
    m.grad_fn_->add_tensor_pre_hook(m.output_nr_, std::move(hook));
  } else {
    m.leaf_hooks_.push_back(std::move(hook));
  }
}

namespace autograd {
namespace {

// The root edges and seed gradients, checked.
void make_roots(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grads, const char* op,
                std::vector<Edge>& roots, variable_list& seeds) {
  ANATOMY_CHECK(grads.empty() || grads.size() == tensors.size(), ValueError, "{}: got {} tensors but {} gradients", op,
                tensors.size(), grads.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    ANATOMY_CHECK(t.defined() && t.requires_grad(), ValueError,
                  "{}: element {} of tensors does not require grad and does not have a grad_fn", op, i);
    Tensor g = grads.empty() ? Tensor() : grads[i];
    if (!g.defined()) {
      ANATOMY_CHECK(t.numel() == 1, ValueError,
                    "{}: grad can be implicitly created only for one-element outputs, got shape [{}]", op,
                    fmt::join(t.sizes(), ", "));
      g = ones_like(t);
    } else {
      ANATOMY_CHECK(g.sizes() == t.sizes(), ValueError, "{}: gradient {} has shape [{}] but the tensor has [{}]", op, i,
                    fmt::join(g.sizes(), ", "), fmt::join(t.sizes(), ", "));
      ANATOMY_CHECK(g.device() == t.device(), ValueError, "{}: gradient {} is on {} but the tensor is on {}", op, i,
                    g.device().str(), t.device().str());
      // Another dtype is cast by the engine, as every gradient a node receives (validate_gradient.h).
    }
    roots.push_back(gradient_edge(t));
    seeds.push_back(std::move(g));
  }
}

}  // namespace

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors, bool retain_graph,
              bool create_graph) {
  std::vector<Edge> roots;
  variable_list seeds;
  make_roots(tensors, grad_tensors, "backward", roots, seeds);
  run_backward(roots, seeds, retain_graph || create_graph, create_graph);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph, bool create_graph,
                         bool allow_unused) {
  std::vector<Edge> roots;
  variable_list seeds;
  make_roots(outputs, grad_outputs, "grad", roots, seeds);
  std::vector<Edge> targets;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ANATOMY_CHECK(inputs[i].defined() && inputs[i].requires_grad(), ValueError, "grad: input {} does not require grad",
                  i);
    targets.push_back(gradient_edge(inputs[i]));
  }
  variable_list result = run_backward(roots, seeds, retain_graph.value_or(create_graph), create_graph, targets);
  for (size_t i = 0; i < result.size(); ++i) {
    ANATOMY_CHECK(result[i].defined() || allow_unused, ValueError,
                  "grad: input {} was not used in the graph; pass allow_unused=true if this is intended", i);
  }
  return result;
}

}  // namespace autograd
}  // namespace anatomy
