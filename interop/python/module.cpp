// anatomy._C: the extension module behind the Python package (interop/python/anatomy/ wraps it).
#include <nanobind/nanobind.h>

#include "bindings.h"

NB_MODULE(_C, m) {
  using namespace anatomy::python;
  m.doc() = "anatomy's engine: tensors, operators, autograd and devices (import anatomy, not this module)";
  bind_errors(m);
  bind_dtypes_devices(m);
  bind_tensor(m);
  bind_tensor_arithmetic(m);
  bind_tensor_views(m);
  bind_tensor_conversions(m);
  bind_tensor_reductions(m);
  bind_tensor_math(m);
  bind_tensor_indexing(m);
  bind_tensor_autograd(m);
  bind_factories(m);
  bind_ops(m);
  bind_library(m);
  bind_cuda_streams(m);
  bind_cuda_memory(m);
  bind_cuda_graphs(m);
  bind_precision_switches(m);
  bind_threads(m);
  bind_profiler(m);
  bind_safetensors(m);
  bind_autocast(m);
  bind_checkpoint(m);
  bind_dlpack(m);
}
