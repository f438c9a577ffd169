// Neural-network building blocks: schemas, composites, the C++ functions and Tensor methods.
// Kernels: backends/cpu/softmax_cpu.cpp, backends/cpu/norm_cpu.cpp, backends/meta/nn_meta.cpp.
#include "anatomy/dispatch/ops/nn.h"

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {
namespace {

// layer_norm is native_layer_norm's first result (the statistics are for backward).
Tensor layer_norm_composite(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                            const std::optional<Tensor>& bias, double eps) {
  return std::get<0>(native_layer_norm(input, normalized_shape, weight, bias, eps));
}

}  // namespace

// ---- softmax and normalizations ----
ANATOMY_LIBRARY(aten, m) {
  m.def("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
  m.def("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
  m.def(
      "native_layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> "
      "(Tensor, Tensor, Tensor)");
  m.def(
      "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) "
      "-> Tensor",
      ANATOMY_KERNEL(layer_norm_composite));
  m.def("rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor");
}

Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::softmax.int", Tensor(const Tensor&, int64_t, std::optional<DType>));
  return op.call(self, dim, dtype);
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::log_softmax.int", Tensor(const Tensor&, int64_t, std::optional<DType>));
  return op.call(self, dim, dtype);
}
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps) {
  ANATOMY_OP(op, "aten::native_layer_norm",
             std::tuple<Tensor, Tensor, Tensor>(const Tensor&, IntArrayRef, const std::optional<Tensor>&,
                                                const std::optional<Tensor>&, double));
  return op.call(input, normalized_shape, weight, bias, eps);
}
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  ANATOMY_OP(op, "aten::layer_norm",
             Tensor(const Tensor&, IntArrayRef, const std::optional<Tensor>&, const std::optional<Tensor>&, double));
  return op.call(input, normalized_shape, weight, bias, eps);
}
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                std::optional<double> eps) {
  ANATOMY_OP(op, "aten::rms_norm",
             Tensor(const Tensor&, IntArrayRef, const std::optional<Tensor>&, std::optional<double>));
  return op.call(input, normalized_shape, weight, eps);
}

// ---- methods ----
Tensor Tensor::softmax(int64_t dim, std::optional<DType> dtype) const { return anatomy::softmax(*this, dim, dtype); }
Tensor Tensor::log_softmax(int64_t dim, std::optional<DType> dtype) const {
  return anatomy::log_softmax(*this, dim, dtype);
}

}  // namespace anatomy
