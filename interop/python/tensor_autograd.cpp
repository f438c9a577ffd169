// Autograd from Python: a tensor's requires_grad, grad, grad_fn, is_leaf, retain_grad, detach and
// backward; grad_fn as an anatomy.autograd.Node (its name, its next functions); grad mode and
// inference mode switches for the context managers of anatomy/autograd.py; autograd.grad.
// Note [Grad mode across the library boundary]: the grad mode and inference mode flags are inline
// thread_local variables of the engine's headers (autograd/grad_mode.h). The module is compiled
// with hidden visibility, which would give it a private copy of each flag, so that no_grad()
// would switch a flag the library never reads. Declared with default visibility here, the
// module's references bind to the library's one definition (a unique symbol).
#pragma GCC visibility push(default)
#include "anatomy/anatomy.h"
#pragma GCC visibility pop

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "bindings.h"
#include "convert.h"
#include "tensor_binding.h"

namespace anatomy::python {

namespace {

using T = const Tensor&;

// A backward node seen from Python; holds a reference, so it stays valid as long as the object.
struct GradFn {
  IntrusivePtr<autograd::Node> node;
};

nb::object grad_fn_of(autograd::Node* node) {
  if (node == nullptr) return nb::none();
  return nb::cast(GradFn{IntrusivePtr<autograd::Node>(node)});
}

nb::object optional_tensor(const Tensor& t) { return t.defined() ? nb::cast(t) : nb::none(); }

// A list of tensors where None is allowed (and means undefined), or one tensor.
std::vector<Tensor> tensors_or_none(nb::handle h, const char* what) {
  std::vector<Tensor> out;
  if (h.is_none()) return out;
  if (nb::isinstance<Tensor>(h)) return {nb::cast<Tensor>(h)};
  if (!PySequence_Check(h.ptr())) throw TypeError(fmt::format("{}: expected a Tensor or a sequence of tensors", what));
  for (nb::handle item : nb::borrow<nb::sequence>(h)) {
    if (item.is_none()) {
      out.emplace_back();
    } else if (nb::isinstance<Tensor>(item)) {
      out.push_back(nb::cast<Tensor>(item));
    } else {
      throw TypeError(fmt::format("{}: expected Tensors or None, got {}", what, nb::type_name(item.type()).c_str()));
    }
  }
  return out;
}

// The context managers' state: saved on __enter__, restored on __exit__.
struct InferenceModeGuard {
  std::optional<autograd::InferenceMode> guard;
};

void bind_grad_fn(nb::module_& m) {
  nb::class_<GradFn>(m, "Node", "A node of the autograd graph: the backward of one operator (x.grad_fn).")
      .def("name", [](const GradFn& f) { return f.node->name(); })
      .def_prop_ro("next_functions",
                   [](const GradFn& f) {
                     nb::list out;
                     for (const autograd::Edge& e : f.node->next_edges()) {
                       out.append(nb::make_tuple(grad_fn_of(e.function.get()), e.input_nr));
                     }
                     return nb::tuple(out);
                   })
      .def("__repr__", [](const GradFn& f) { return fmt::format("<{} object>", f.node->name()); })
      .def("__eq__", [](const GradFn& a, const GradFn& b) { return a.node.get() == b.node.get(); })
      .def("__hash__", [](const GradFn& f) { return reinterpret_cast<uintptr_t>(f.node.get()); });
}

void bind_tensor_methods(nb::module_& m) {
  TensorClass cls = tensor_class(m);
  const auto ref = nb::rv_policy::reference;
  cls.def_prop_rw(
      "requires_grad", [](T t) { return t.requires_grad(); }, [](Tensor& t, bool value) { t.requires_grad_(value); });
  cls.def(
      "requires_grad_", [](Tensor& t, bool value) -> const Tensor& { return t.requires_grad_(value); },
      nb::arg("requires_grad") = true, ref);
  cls.def_prop_rw(
      "grad", [](T t) { return optional_tensor(t.grad()); },
      [](T t, std::optional<Tensor> g) { t.set_grad(g.value_or(Tensor())); }, nb::arg("grad").none());
  // PyTorch's .data: the same memory, sizes and strides as a new tensor that does not require grad,
  // with a version counter of its own (autograd does not see its in-place writes); setting it is
  // Tensor::set_data (the tensor, through every handle, takes the new data).
  cls.def_prop_rw(
      "data",
      [](T t) {
        return Tensor(
            IntrusivePtr<TensorImpl>::make(t.impl()->storage(), t.dtype(), t.sizes(), t.strides(), t.storage_offset()));
      },
      [](T t, const Tensor& data) { t.set_data(data); });
  cls.def_prop_ro("grad_fn", [](T t) { return grad_fn_of(t.grad_fn()); });
  cls.def_prop_ro("is_leaf", &Tensor::is_leaf);
  cls.def_prop_ro("retains_grad", &Tensor::retains_grad);
  cls.def_prop_ro("is_inference", &Tensor::is_inference);
  cls.def("retain_grad", &Tensor::retain_grad);
  def_method_and_function(cls, m, "detach", [](T t) { return t.detach(); });
  cls.def(
      "detach_", [](T t) -> const Tensor& { return t.detach_(); }, ref);
  cls.def(
      "backward",
      [](T t, std::optional<Tensor> gradient, std::optional<bool> retain_graph, bool create_graph) {
        t.backward(gradient.value_or(Tensor()), retain_graph.value_or(create_graph), create_graph);
      },
      nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = nb::none(), nb::arg("create_graph") = false);
}

void bind_modes(nb::module_& m) {
  m.def("is_grad_enabled", &autograd::GradMode::is_enabled);
  m.def("_set_grad_enabled", &autograd::GradMode::set_enabled, nb::arg("mode"));
  m.def("is_inference_mode_enabled", &autograd::InferenceMode::is_enabled);
  nb::class_<InferenceModeGuard>(m, "_InferenceModeGuard")
      .def(nb::init<>())
      .def("enter", [](InferenceModeGuard& g, bool mode) { g.guard.emplace(mode); })
      .def("exit", [](InferenceModeGuard& g) { g.guard.reset(); });
  m.def(
      "_autograd_grad",
      [](nb::handle outputs, nb::handle inputs, nb::handle grad_outputs, std::optional<bool> retain_graph,
         bool create_graph, bool allow_unused) {
        std::vector<Tensor> grads = autograd::grad(
            tensors_or_none(outputs, "grad(): outputs"), tensors_or_none(inputs, "grad(): inputs"),
            tensors_or_none(grad_outputs, "grad(): grad_outputs"), retain_graph, create_graph, allow_unused);
        nb::list out;
        for (const Tensor& g : grads) out.append(optional_tensor(g));
        return nb::tuple(out);
      },
      nb::arg("outputs"), nb::arg("inputs"), nb::arg("grad_outputs") = nb::none(), nb::arg("retain_graph") = nb::none(),
      nb::arg("create_graph") = false, nb::arg("allow_unused") = false);
  m.def(
      "_autograd_backward",
      [](nb::handle tensors, nb::handle grad_tensors, std::optional<bool> retain_graph, bool create_graph) {
        autograd::backward(tensors_or_none(tensors, "backward(): tensors"),
                           tensors_or_none(grad_tensors, "backward(): grad_tensors"),
                           retain_graph.value_or(create_graph), create_graph);
      },
      nb::arg("tensors"), nb::arg("grad_tensors") = nb::none(), nb::arg("retain_graph") = nb::none(),
      nb::arg("create_graph") = false);
}

}  // namespace

void bind_tensor_autograd(nb::module_& m) {
  bind_grad_fn(m);
  bind_tensor_methods(m);
  bind_modes(m);
}

}  // namespace anatomy::python
