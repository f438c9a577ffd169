// anatomy._C's precision switches (core/precision_switches.h), behind anatomy.backends' attributes.
#include <nanobind/nanobind.h>

#include "anatomy/anatomy.h"
#include "bindings.h"

namespace anatomy::python {

void bind_precision_switches(nb::module_& m) {
  nb::module_ s = m.def_submodule("_precision", "process-wide switches that trade accuracy for speed");
  s.def("allow_tf32_matmul", &allow_tf32_matmul);
  s.def("set_allow_tf32_matmul", &set_allow_tf32_matmul, nb::arg("allow"));
  s.def("allow_fp16_reduced_precision_reduction", &allow_fp16_reduced_precision_reduction);
  s.def("set_allow_fp16_reduced_precision_reduction", &set_allow_fp16_reduced_precision_reduction, nb::arg("allow"));
  s.def("allow_bf16_reduced_precision_reduction", &allow_bf16_reduced_precision_reduction);
  s.def("set_allow_bf16_reduced_precision_reduction", &set_allow_bf16_reduced_precision_reduction, nb::arg("allow"));
  s.def("allow_fp16_accumulation", &allow_fp16_accumulation);
  s.def("set_allow_fp16_accumulation", &set_allow_fp16_accumulation, nb::arg("allow"));
  s.def("allow_tf32_cudnn", &allow_tf32_cudnn);
  s.def("set_allow_tf32_cudnn", &set_allow_tf32_cudnn, nb::arg("allow"));
  s.def("cudnn_benchmark", &cudnn_benchmark);
  s.def("set_cudnn_benchmark", &set_cudnn_benchmark, nb::arg("enabled"));
}

}  // namespace anatomy::python
