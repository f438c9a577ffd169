// Helpers shared by the tensor_*.cpp binding files: one C++ callable becomes both the method
// x.name(...) and the function anatomy.name(input, ...), as in PyTorch, so each is written once;
// in-place methods hand back the very Python object they were called on (`a.add_(b) is a`).
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::python {

namespace nb = nanobind;

using TensorClass = nb::class_<Tensor>;

// anatomy.Tensor as registered by bind_tensor, for the files that add methods to it.
inline TensorClass tensor_class(nb::module_& m) { return nb::borrow<TensorClass>(m.attr("Tensor")); }

// x.name(args...) and anatomy.name(input, args...). `extra` names the arguments after self.
template <typename F, typename... Extra>
void def_method_and_function(TensorClass& cls, nb::module_& m, const char* name, F&& f, const Extra&... extra) {
  cls.def(name, f, extra...);
  m.def(name, f, nb::arg("input"), extra...);
}

// The result of an in-place method: the tensor it was called on.
using InPlace = const Tensor&;

// x.name_(args...), returning x itself: `f` returns a reference to the Tensor held by the Python
// object, which nanobind maps back to that object.
template <typename F, typename... Extra>
void def_in_place(TensorClass& cls, const char* name, F&& f, const Extra&... extra) {
  cls.def(name, f, nb::rv_policy::reference, extra...);
}

// dim= as converted by to_optional_dims, as the engine takes it (no list: every dim).
inline OptionalIntArrayRef dims_ref(const std::optional<std::vector<int64_t>>& dims) {
  return dims ? OptionalIntArrayRef(*dims) : OptionalIntArrayRef(std::nullopt);
}

}  // namespace anatomy::python
