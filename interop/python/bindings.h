// The parts of the extension module anatomy._C, one function per concern, each defined in the
// file of its name and called once from module.cpp in this order (later parts use the types
// that earlier ones registered).
#pragma once

#include <nanobind/nanobind.h>

namespace anatomy::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);          // errors.cpp: engine errors as Python exceptions
void bind_dtypes_devices(nb::module_& m);  // dtypes_devices.cpp: anatomy.dtype, anatomy.device
void bind_tensor(nb::module_& m);          // tensor.cpp: anatomy.Tensor

}  // namespace anatomy::python
