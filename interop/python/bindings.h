// The parts of the extension module anatomy._C, one function per concern, each defined in the
// file of its name and called once from module.cpp in this order (later parts use the types
// that earlier ones registered).
#pragma once

#include <nanobind/nanobind.h>

namespace anatomy::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);              // errors.cpp: engine errors as Python exceptions
void bind_dtypes_devices(nb::module_& m);      // dtypes_devices.cpp: anatomy.dtype, anatomy.device
void bind_tensor(nb::module_& m);              // tensor.cpp: anatomy.Tensor, its metadata and protocols
void bind_tensor_arithmetic(nb::module_& m);   // tensor_arithmetic.cpp: operators, element-wise ops
void bind_tensor_views(nb::module_& m);        // tensor_views.cpp: view, reshape, permute, ...
void bind_tensor_conversions(nb::module_& m);  // tensor_conversions.cpp: to, cuda, float, clone, copy_
void bind_tensor_reductions(nb::module_& m);   // tensor_reductions.cpp: sum, max, std, sort, ...
void bind_tensor_math(nb::module_& m);         // tensor_math.cpp: matmul, softmax, where, cat, ...
void bind_tensor_indexing(nb::module_& m);     // tensor_indexing.cpp: x[...] and x[...] = v
void bind_tensor_autograd(nb::module_& m);     // tensor_autograd.cpp: grad, backward, grad modes
void bind_factories(nb::module_& m);           // factories.cpp: tensor, zeros, arange, rand, ...
void bind_ops(nb::module_& m);                 // ops_call.cpp: anatomy.ops' overload packets
void bind_library(nb::module_& m);             // ops_library.cpp: anatomy.library (Python kernels)
void bind_cuda_streams(nb::module_& m);        // cuda_streams.cpp: anatomy.cuda's devices, streams, events
void bind_cuda_memory(nb::module_& m);         // cuda_memory.cpp: anatomy.cuda's memory statistics
void bind_cuda_graphs(nb::module_& m);         // cuda_graphs.cpp: anatomy.cuda's CUDAGraph, graph_pool_handle
void bind_precision_switches(nb::module_& m);  // precision_switches.cpp: anatomy.backends' switches
void bind_threads(nb::module_& m);             // threads.cpp: set_num_threads, get_num_threads
void bind_profiler(nb::module_& m);            // profiler.cpp: anatomy.profiler's profile and record_function
void bind_safetensors(nb::module_& m);         // safetensors.cpp: anatomy.safetensors' save_file, load_file
void bind_autocast(nb::module_& m);            // autocast.cpp: anatomy.autocast's scopes and queries
void bind_checkpoint(nb::module_& m);          // checkpoint.cpp: anatomy.utils.checkpoint
void bind_dlpack(nb::module_& m);  // dlpack_protocol.cpp: __dlpack__, from_dlpack, numpy(), __cuda_array_interface__

}  // namespace anatomy::python
