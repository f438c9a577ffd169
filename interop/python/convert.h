// Python values to the engine's, for every binding: what a user may pass where the engine takes
// a dtype, a device, a Scalar or a list of sizes. Each throws the engine's typed error (TypeError
// for a value of the wrong kind, ValueError for a bad spelling) naming `what`, the argument, so
// that the message reads like the C++ API's.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::python {

namespace nb = nanobind;

// anatomy.float32 (an anatomy.dtype), or its name as a string ("float32", "fp32", "torch.float32").
DType to_dtype(nb::handle h, std::string_view what = "dtype");
// anatomy.device, "cpu", "cuda", "cuda:1", "meta", or an int (that CUDA device).
Device to_device(nb::handle h, std::string_view what = "device");
// bool, int (that fits int64), float, or a one-element Tensor (its value, as item() reads it).
Scalar to_scalar(nb::handle h, std::string_view what = "value");
bool is_scalar(nb::handle h);  // whether to_scalar would take h (no tensor)
// dtype= of the reductions and softmax: None, or as to_dtype. (Not nanobind's enum cast, which
// would take a plain int as a dtype.)
std::optional<DType> to_optional_dtype(nb::handle h, std::string_view what = "dtype");
// An int, or a sequence of ints (tuple, list, anatomy.Size...): sizes, dims, strides.
std::vector<int64_t> to_int_list(nb::handle h, std::string_view what = "size");
// An int that fits int64 (a Python bool is refused: True is not a dimension).
int64_t to_int(nb::handle h, std::string_view what);

// The value of a one-element tensor, for Python's number protocols and item(); a RuntimeError
// naming `what` otherwise, as PyTorch's.
Scalar only_element(const Tensor& t, std::string_view what);

// The Python form of a Scalar: bool, int or float.
nb::object from_scalar(const Scalar& s);

// dim= of the reductions: None (every dim), an int, or a sequence of ints.
std::optional<std::vector<int64_t>> to_optional_dims(nb::handle h, std::string_view what = "dim");
// Sizes given as varargs or as one sequence: zeros(2, 3), zeros((2, 3)), x.view([6]).
std::vector<int64_t> sizes_from_args(const nb::args& args, std::string_view what = "size");
// The factories' dtype= / device= / requires_grad= keywords (None: the default).
TensorOptions to_options(nb::handle dtype, nb::handle device, bool requires_grad = false);

// A tensor from Python data: nested sequences of numbers (dtype inferred as PyTorch: bool, int64,
// the default float), a Tensor (copied), or an object with the buffer protocol (copied, keeping
// its dtype). `dtype` and `device` (may be None) override.
Tensor tensor_from_data(nb::handle data, nb::handle dtype, nb::handle device);

}  // namespace anatomy::python

namespace nanobind::detail {

// anatomy::Scalar from a Python bool, int (that fits int64) or float, or any other number
// (NumPy scalars) through __index__ or __float__. A Tensor is not a Scalar here: overloads taking
// a Tensor come first, and a one-element tensor stays a tensor, as in PyTorch. Accepting the
// exact types first keeps `a + 1` on the fast path of overload resolution.
template <>
struct type_caster<anatomy::Scalar> {
  NB_TYPE_CASTER(anatomy::Scalar, const_name("float | int | bool"))

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    if (PyFloat_CheckExact(o)) {
      value = anatomy::Scalar(PyFloat_AS_DOUBLE(o));
      return true;
    }
    if (PyBool_Check(o)) {
      value = anatomy::Scalar(o == Py_True);
      return true;
    }
    if (PyLong_Check(o) || (PyIndex_Check(o) && !PyFloat_Check(o) && !is_tensor(src))) {
      PyObject* index = PyNumber_Index(o);
      if (index == nullptr) {
        PyErr_Clear();
        return false;
      }
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
      Py_DECREF(index);
      if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return false;
      }
      value = anatomy::Scalar(static_cast<int64_t>(v));
      return true;
    }
    if (PyFloat_Check(o) || (PyNumber_Check(o) && !PyComplex_Check(o) && !is_tensor(src))) {
      double v = PyFloat_AsDouble(o);
      if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      value = anatomy::Scalar(v);
      return true;
    }
    return false;
  }
  static handle from_cpp(const anatomy::Scalar& s, rv_policy, cleanup_list*) noexcept {
    return anatomy::python::from_scalar(s).release();
  }

 private:
  static bool is_tensor(handle h) { return nanobind::isinstance<anatomy::Tensor>(h); }
};

}  // namespace nanobind::detail
