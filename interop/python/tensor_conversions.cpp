// Copies and conversions of anatomy.Tensor: to(dtype / device / other, non_blocking, copy,
// memory_format), cuda(), cpu(), float() and the other dtype shorthands, is_contiguous,
// contiguous, clone, copy_, fill_, zero_.
#include <nanobind/stl/optional.h>

#include <fmt/format.h>

#include "bindings.h"
#include "convert.h"
#include "ivalue_convert.h"
#include "tensor_binding.h"

namespace anatomy::python {

namespace {

using T = const Tensor&;

// x.to(dtype), x.to(device, dtype=None), x.to(other), with the keywords dtype=, device=,
// non_blocking=, copy= and memory_format=, as PyTorch's overloads. Positional arguments are told
// apart by type.
Tensor to(T self, const nb::args& args, const nb::kwargs& kwargs) {
  std::optional<DType> dtype;
  std::optional<Device> device;
  std::optional<MemoryFormat> memory_format;
  bool non_blocking = false, copy = false;
  std::vector<nb::handle> flags;  // positional bools after the dtype/device: non_blocking, copy
  for (nb::handle a : args) {
    if (PyBool_Check(a.ptr())) {
      flags.push_back(a);
    } else if (!flags.empty()) {
      throw TypeError("to(): a dtype or device after non_blocking/copy");
    } else if (nb::isinstance<Tensor>(a)) {
      const Tensor& other = nb::cast<const Tensor&>(a);
      dtype = other.dtype();
      device = other.device();
    } else if (nb::isinstance<DType>(a)) {
      if (dtype) throw TypeError("to(): the dtype is given twice");
      dtype = nb::cast<DType>(a);
    } else if (!device && !dtype) {
      device = to_device(a, "to(): device");
    } else {
      throw TypeError(fmt::format("to(): unexpected argument of type {}", nb::type_name(a.type()).c_str()));
    }
  }
  if (flags.size() > 2) throw TypeError("to(): too many arguments");
  if (!flags.empty()) non_blocking = flags[0].ptr() == Py_True;
  if (flags.size() == 2) copy = flags[1].ptr() == Py_True;
  for (auto [key, value] : kwargs) {
    const std::string name = nb::cast<std::string>(key);
    if (name == "dtype") {
      if (!value.is_none()) dtype = to_dtype(value);
    } else if (name == "device") {
      if (!value.is_none()) device = to_device(value);
    } else if (name == "non_blocking") {
      non_blocking = nb::cast<bool>(value);
    } else if (name == "copy") {
      copy = nb::cast<bool>(value);
    } else if (name == "memory_format") {
      if (!value.is_none() && !nb::isinstance<MemoryFormat>(value)) {
        throw TypeError(fmt::format("to(): memory_format must be an anatomy.memory_format, got {}",
                                    nb::type_name(value.type()).c_str()));
      }
      if (!value.is_none()) memory_format = nb::cast<MemoryFormat>(value);
    } else {
      throw TypeError(fmt::format("to() got an unexpected keyword argument '{}'", name));
    }
  }
  return self.to(device.value_or(self.device()), dtype.value_or(self.dtype()), non_blocking, copy, memory_format);
}

}  // namespace

void bind_tensor_conversions(nb::module_& m) {
  TensorClass cls = tensor_class(m);
  bind_memory_format(m);  // the memory_format= defaults below are of its type
  cls.def("to", &to);
  cls.def(
      "cuda",
      [](T t, nb::handle device, bool non_blocking) {
        Device d = device.is_none() ? Device(DeviceType::CUDA) : to_device(device);
        if (!d.is_cuda()) throw ValueError(fmt::format("cuda(): {} is not a CUDA device", d.str()));
        return t.to(d, non_blocking);
      },
      nb::arg("device") = nb::none(), nb::arg("non_blocking") = false);
  cls.def("cpu", [](T t) { return t.cpu(); });
  struct Shorthand {
    const char* name;
    DType dtype;
  };
  for (Shorthand s :
       {Shorthand{"float", DType::Float32}, Shorthand{"double", DType::Float64}, Shorthand{"half", DType::Float16},
        Shorthand{"bfloat16", DType::BFloat16}, Shorthand{"long", DType::Int64}, Shorthand{"int", DType::Int32},
        Shorthand{"char", DType::Int8}, Shorthand{"byte", DType::UInt8}, Shorthand{"bool", DType::Bool}}) {
    cls.def(s.name, [dtype = s.dtype](T t) { return t.to(dtype); });
  }
  cls.def(
      "type",
      [](T t, nb::handle dtype) -> nb::object {
        if (dtype.is_none()) return nb::str(fmt::format("anatomy.{}", name(t.dtype())).c_str());
        return nb::cast(t.to(to_dtype(dtype)));
      },
      nb::arg("dtype") = nb::none());
  // memory_format is keyword-only, as in PyTorch's is_contiguous(*, memory_format) and
  // contiguous(*, memory_format).
  cls.def(
      "is_contiguous", [](T t, MemoryFormat memory_format) { return t.is_contiguous(memory_format); }, nb::kw_only(),
      nb::arg("memory_format") = MemoryFormat::Contiguous);
  cls.def(
      "contiguous", [](T t, MemoryFormat memory_format) { return t.contiguous(memory_format); }, nb::kw_only(),
      nb::arg("memory_format") = MemoryFormat::Contiguous);
  def_method_and_function(
      cls, m, "clone", [](T t, MemoryFormat memory_format) { return t.clone(memory_format); }, nb::kw_only(),
      nb::arg("memory_format") = MemoryFormat::Preserve);
  def_in_place(
      cls, "copy_", [](T t, T src, bool non_blocking) -> InPlace { return t.copy_(src, non_blocking); }, nb::arg("src"),
      nb::arg("non_blocking") = false);
  def_in_place(
      cls, "fill_", [](T t, const Scalar& v) -> InPlace { return t.fill_(v); }, nb::arg("value"));
  def_in_place(
      cls, "fill_", [](T t, T v) -> InPlace { return t.fill_(only_element(v, "fill_")); }, nb::arg("value"));
  def_in_place(cls, "zero_", [](T t) -> InPlace { return t.zero_(); });
  def_in_place(
      cls, "uniform_", [](T t, double from, double to) -> InPlace { return t.uniform_(from, to); },
      nb::arg("from_") = 0.0, nb::arg("to") = 1.0);
  def_in_place(
      cls, "normal_", [](T t, double mean, double std) -> InPlace { return t.normal_(mean, std); },
      nb::arg("mean") = 0.0, nb::arg("std") = 1.0);
}

}  // namespace anatomy::python
