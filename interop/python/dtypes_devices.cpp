// anatomy.dtype (one member per dtype of core/dtype.h, named as PyTorch names them) and
// anatomy.device (a value: type and index, made from "cuda:1", ("cuda", 1) or another device).
#include <nanobind/stl/string.h>

#include <fmt/format.h>

#include "anatomy/anatomy.h"
#include "bindings.h"
#include "convert.h"

namespace anatomy::python {

namespace {
// "float32" for DType::Float32: torch_name without its "torch." prefix.
const char* python_name(DType d) { return torch_name(d).data() + 6; }
}  // namespace

void bind_dtypes_devices(nb::module_& m) {
  nb::enum_<DType> dtype(m, "dtype", "The element type of a tensor: anatomy.float32, anatomy.int64, ...");
#define ANATOMY_BIND_DTYPE(type, name, short_name, long_name) dtype.value(python_name(DType::name), DType::name);
  ANATOMY_FORALL_DTYPES(ANATOMY_BIND_DTYPE)
#undef ANATOMY_BIND_DTYPE
  dtype
      .def_prop_ro(
          "itemsize", [](DType d) { return element_size(d); }, "Bytes per element.")
      .def_prop_ro("is_floating_point", [](DType d) { return is_floating(d); })
      .def("__repr__", [](DType d) { return fmt::format("anatomy.{}", python_name(d)); })
      .def("__str__", [](DType d) { return fmt::format("anatomy.{}", python_name(d)); });

  nb::class_<Device>(m, "device", "A device: its type ('cpu', 'cuda', 'meta') and index (None for 'the current').")
      .def(
          "__init__", [](Device* self, nb::handle spec) { new (self) Device(to_device(spec)); }, nb::arg("device"))
      .def(
          "__init__",
          [](Device* self, const std::string& type, int64_t index) {
            Device base(type);
            if (index < 0 || index > 127) throw ValueError(fmt::format("device: index {} is out of range", index));
            new (self) Device(base.type(), static_cast<Device::Index>(index));
          },
          nb::arg("type"), nb::arg("index"))
      .def_prop_ro("type", [](const Device& d) { return Device(d.type()).str(); })
      .def_prop_ro(
          "index",
          [](const Device& d) -> nb::object { return d.has_index() ? nb::object(nb::int_(d.index())) : nb::none(); })
      .def("__str__", &Device::str)
      .def("__repr__",
           [](const Device& d) {
             return fmt::format("device(type='{}'{})", Device(d.type()).str(),
                                d.has_index() ? fmt::format(", index={}", d.index()) : "");
           })
      .def("__eq__",
           [](const Device& a, nb::handle b) {
             try {
               return a == to_device(b);
             } catch (const Error&) {
               return false;
             }
           })
      .def("__hash__", [](const Device& d) { return std::hash<std::string>()(d.str()); });
  nb::implicitly_convertible<nb::str, Device>();
}

}  // namespace anatomy::python
