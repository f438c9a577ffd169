#include "convert.h"

#include <nanobind/stl/string.h>

#include <fmt/format.h>

namespace anatomy::python {

namespace {
std::string python_type_name(nb::handle h) { return nb::type_name(h.type()).c_str(); }
}  // namespace

DType to_dtype(nb::handle h, std::string_view what) {
  if (nb::isinstance<DType>(h)) return nb::cast<DType>(h);
  if (nb::isinstance<nb::str>(h)) {
    std::string text = nb::cast<std::string>(h);
    std::string_view s = text;
    if (s.starts_with("torch.")) s.remove_prefix(6);
    if (s.starts_with("anatomy.")) s.remove_prefix(8);
    return parse_dtype(s);
  }
  throw TypeError(fmt::format("{} must be an anatomy.dtype or a dtype's name, got {}", what, python_type_name(h)));
}

std::optional<DType> to_optional_dtype(nb::handle h, std::string_view what) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h, what);
}

Device to_device(nb::handle h, std::string_view what) {
  if (nb::isinstance<Device>(h)) return nb::cast<Device>(h);
  if (nb::isinstance<nb::str>(h)) return Device(nb::cast<std::string>(h));
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) {
    int64_t index = to_int(h, what);
    if (index < 0 || index > 127)
      throw ValueError(fmt::format("{}: CUDA device index {} is out of range", what, index));
    return Device(DeviceType::CUDA, static_cast<Device::Index>(index));
  }
  throw TypeError(fmt::format("{} must be an anatomy.device, a string such as 'cuda:0', or an int, got {}", what,
                              python_type_name(h)));
}

bool is_scalar(nb::handle h) { return PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr()); }

int64_t to_int(nb::handle h, std::string_view what) {
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr())) {
    throw TypeError(fmt::format("{} must be an int, got {}", what, python_type_name(h)));
  }
  int overflow = 0;
  nb::object index = nb::steal(PyNumber_Index(h.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw ValueError(fmt::format("{}: {} does not fit in int64", what, nb::cast<std::string>(nb::str(h))));
  }
  return static_cast<int64_t>(v);
}

Scalar to_scalar(nb::handle h, std::string_view what) {
  if (PyBool_Check(h.ptr())) return Scalar(h.ptr() == Py_True);
  if (PyLong_Check(h.ptr())) return Scalar(to_int(h, what));
  if (PyFloat_Check(h.ptr())) return Scalar(PyFloat_AsDouble(h.ptr()));
  if (nb::isinstance<Tensor>(h)) {
    const Tensor& t = nb::cast<const Tensor&>(h);
    if (t.numel() != 1) {
      throw ValueError(
          fmt::format("{}: a tensor used as a number must have one element, this one has {}", what, t.numel()));
    }
    return t.item();
  }
  // NumPy scalars and other numbers: through their index or float protocol.
  if (PyIndex_Check(h.ptr())) return Scalar(to_int(h, what));
  if (PyNumber_Check(h.ptr()) && !PyComplex_Check(h.ptr())) {
    double v = PyFloat_AsDouble(h.ptr());
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    return Scalar(v);
  }
  throw TypeError(fmt::format("{} must be a bool, int or float, got {}", what, python_type_name(h)));
}

std::vector<int64_t> to_int_list(nb::handle h, std::string_view what) {
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return {to_int(h, what)};
  if (!PySequence_Check(h.ptr()) || nb::isinstance<nb::str>(h) || nb::isinstance<Tensor>(h)) {
    throw TypeError(fmt::format("{} must be an int or a sequence of ints, got {}", what, python_type_name(h)));
  }
  std::vector<int64_t> out;
  nb::sequence seq = nb::borrow<nb::sequence>(h);
  out.reserve(nb::len(seq));
  for (nb::handle item : seq) out.push_back(to_int(item, what));
  return out;
}

std::optional<std::vector<int64_t>> to_optional_dims(nb::handle h, std::string_view what) {
  if (h.is_none()) return std::nullopt;
  return to_int_list(h, what);
}

std::vector<int64_t> sizes_from_args(const nb::args& args, std::string_view what) {
  if (args.size() == 1 && !PyIndex_Check(args[0].ptr())) return to_int_list(args[0], what);
  std::vector<int64_t> out;
  out.reserve(args.size());
  for (nb::handle item : args) out.push_back(to_int(item, what));
  return out;
}

TensorOptions to_options(nb::handle dtype, nb::handle device, bool requires_grad) {
  TensorOptions o;
  if (!dtype.is_none()) o = o.dtype(to_dtype(dtype));
  if (!device.is_none()) o = o.device(to_device(device));
  return o.requires_grad(requires_grad);
}

// Python's number protocols need one element, as PyTorch's do (RuntimeError otherwise).
Scalar only_element(const Tensor& t, std::string_view what) {
  if (t.numel() != 1) {
    throw Error(fmt::format("{}: only a tensor of one element can be converted to a Python scalar, this one has {}",
                            what, t.numel()));
  }
  return t.item();
}

nb::object from_scalar(const Scalar& s) {
  if (s.is_bool()) return nb::bool_(s.to<bool>());
  if (s.is_integral()) return nb::int_(s.to<int64_t>());
  return nb::float_(s.to<double>());
}

}  // namespace anatomy::python
