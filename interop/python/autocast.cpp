// anatomy.autocast's engine side: a scope that turns autocast on or off for the tensors of one
// device type on the calling thread (amp/autocast_mode.h's AutocastGuard, entered and left by the
// Python context manager of anatomy/amp.py), and the state queries.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "anatomy/anatomy.h"
#include "bindings.h"
#include "convert.h"

namespace anatomy::python {

namespace {

DeviceType autocast_device_type(const std::string& name) {
  if (name == "cpu") return DeviceType::CPU;
  if (name == "cuda") return DeviceType::CUDA;
  ANATOMY_THROW(ValueError, "autocast: device_type must be 'cpu' or 'cuda', got '{}'", name);
}

// One entry into an autocast region; the guard restores, on exit, the state it found.
class AutocastScope {
 public:
  AutocastScope(const std::string& device_type, std::optional<DType> dtype, bool enabled)
      : type_(autocast_device_type(device_type)), dtype_(dtype), enabled_(enabled) {
    ANATOMY_CHECK(!dtype || *dtype == DType::BFloat16 || *dtype == DType::Float16, ValueError,
                  "autocast: dtype must be float16 or bfloat16, got {}", name(*dtype));
  }
  void enter() {
    ANATOMY_CHECK(!guard_, ValueError, "autocast: this scope is entered already");
    guard_.emplace(type_, dtype_, enabled_);
  }
  void exit() { guard_.reset(); }

 private:
  DeviceType type_;
  std::optional<DType> dtype_;
  bool enabled_;
  std::optional<autocast::AutocastGuard> guard_;
};

}  // namespace

void bind_autocast(nb::module_& m) {
  nb::class_<AutocastScope>(m, "_AutocastScope")
      .def(
          "__init__",
          [](AutocastScope* self, const std::string& device_type, nb::handle dtype, bool enabled) {
            new (self) AutocastScope(device_type, to_optional_dtype(dtype), enabled);
          },
          nb::arg("device_type"), nb::arg("dtype").none(), nb::arg("enabled"))
      .def("enter", &AutocastScope::enter)
      .def("exit", &AutocastScope::exit);
  m.def(
      "is_autocast_enabled",
      [](const std::string& device_type) { return autocast::is_enabled(autocast_device_type(device_type)); },
      nb::arg("device_type") = "cuda");
  m.def(
      "get_autocast_dtype",
      [](const std::string& device_type) { return autocast::get_dtype(autocast_device_type(device_type)); },
      nb::arg("device_type"));
}

}  // namespace anatomy::python
