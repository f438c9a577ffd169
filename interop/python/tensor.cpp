// anatomy.Tensor: the engine's Tensor (a handle to its TensorImpl), held by value in the Python
// object, so that two Python objects may share one tensor as two C++ handles do.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "anatomy/anatomy.h"
#include "bindings.h"
#include "convert.h"

namespace anatomy::python {

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor>(m, "Tensor", "A view of typed memory on a device: sizes, strides, an offset and a dtype.")
      .def_prop_ro("shape", [](const Tensor& t) { return nb::tuple(nb::cast(t.sizes().vec())); })
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", &Tensor::device)
      .def_prop_ro("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("__repr__", [](const Tensor& t) { return to_string(t); });
}

}  // namespace anatomy::python
