// anatomy.Tensor: the engine's Tensor (a handle to its TensorImpl), held by value in the Python
// object, so that two Python objects may share one tensor as two C++ handles do. This file
// registers the class and its metadata and Python protocols (len, iter, bool, int, float, index,
// repr, hash); the other tensor_*.cpp files add the methods of one family each.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "bindings.h"
#include "convert.h"
#include "tensor_object.h"

namespace anatomy::python {

namespace {

// anatomy.Size (a tuple subclass defined in anatomy/__init__.py); a plain tuple until it is set.
// Leaked on purpose: it must outlive every tensor, and the interpreter frees it at exit.
PyObject* size_type = nullptr;

nb::object as_size(IntArrayRef values) {
  nb::tuple t = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(values.size())));
  for (size_t i = 0; i < values.size(); ++i) {
    PyTuple_SET_ITEM(t.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(values[i]));
  }
  if (size_type == nullptr) return std::move(t);
  return nb::steal(PyObject_CallOneArg(size_type, t.ptr()));
}

// Values of a CPU tensor of dtype float64, int64 or bool, as nested lists.
template <typename T>
nb::object nested_list(const T* data, IntArrayRef sizes, size_t depth) {
  if (depth == sizes.size()) return nb::cast(*data);
  nb::list out;
  int64_t step = 1;
  for (size_t d = depth + 1; d < sizes.size(); ++d) step *= sizes[d];
  for (int64_t i = 0; i < sizes[depth]; ++i) out.append(nested_list(data + i * step, sizes, depth + 1));
  return std::move(out);
}

nb::object to_list(const Tensor& self) {
  const DType wide = self.dtype() == DType::Bool ? DType::Bool
                     : is_floating(self.dtype()) ? DType::Float64
                                                 : DType::Int64;
  Tensor flat = self.detach().to(kCPU, wide).contiguous();
  if (wide == DType::Bool) return nested_list(flat.data_ptr<bool>(), flat.sizes(), 0);
  if (wide == DType::Float64) return nested_list(flat.data_ptr<double>(), flat.sizes(), 0);
  return nested_list(flat.data_ptr<int64_t>(), flat.sizes(), 0);
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor> cls(m, "Tensor", "A view of typed memory on a device: sizes, strides, an offset and a dtype.");
  set_tensor_type(cls);
  m.def("_set_size_type", [](nb::handle type) {
    Py_XDECREF(size_type);
    size_type = type.inc_ref().ptr();
  });
  cls.def_prop_ro("shape", [](const Tensor& t) { return as_size(t.sizes()); })
      .def(
          "size",
          [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
            if (dim) return nb::int_(t.size(*dim));
            return as_size(t.sizes());
          },
          nb::arg("dim") = nb::none())
      .def(
          "stride",
          [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
            if (dim) return nb::int_(t.stride(*dim));
            return nb::tuple(nb::cast(t.strides().vec()));
          },
          nb::arg("dim") = nb::none())
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", &Tensor::device)
      .def_prop_ro("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("ndimension", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("nelement", &Tensor::numel)
      .def("storage_offset", &Tensor::storage_offset)
      .def("element_size", &Tensor::element_size)
      .def_prop_ro("itemsize", &Tensor::element_size)
      .def_prop_ro("nbytes", &Tensor::nbytes)
      .def("is_floating_point", &Tensor::is_floating_point)
      .def_prop_ro("is_cuda", &Tensor::is_cuda)
      .def_prop_ro("is_cpu", &Tensor::is_cpu)
      .def_prop_ro("is_meta", &Tensor::is_meta)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("item", [](const Tensor& t) { return from_scalar(only_element(t, "item")); })
      .def("tolist", &to_list)
      .def("__repr__", [](const Tensor& t) { return to_string(t); })
      .def("__hash__", [](nb::handle self) { return reinterpret_cast<intptr_t>(self.ptr()) >> 4; })
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw TypeError("len() of a 0-d tensor");
             return t.size(0);
           })
      .def("__iter__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw TypeError("iteration over a 0-d tensor");
             return nb::iter(nb::cast(t.unbind(0)));
           })
      .def("__bool__", [](const Tensor& t) { return only_element(t, "bool").to_bool(); })
      .def("__float__", [](const Tensor& t) { return only_element(t, "float").to_double(); })
      .def("__int__", [](const Tensor& t) { return only_element(t, "int").to_int(); })
      .def("__index__", [](const Tensor& t) {
        if (t.numel() != 1 || is_floating(t.dtype()) || t.dtype() == DType::Bool) {
          throw TypeError("only integer tensors of a single element can be converted to an index");
        }
        return t.item().to_int();
      });
}

}  // namespace anatomy::python
