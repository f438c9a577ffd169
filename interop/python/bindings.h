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
void bind_ops(nb::module_& m);             // ops_call.cpp: anatomy.ops' overload packets
void bind_library(nb::module_& m);         // ops_library.cpp: anatomy.library (Python kernels)
void bind_cuda_streams(nb::module_& m);    // cuda_streams.cpp: anatomy.cuda's devices, streams, events
void bind_cuda_memory(nb::module_& m);     // cuda_memory.cpp: anatomy.cuda's memory statistics

}  // namespace anatomy::python
