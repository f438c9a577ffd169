// Meta: softmax, log_softmax, native_layer_norm and rms_norm compute only their results'
// shapes and dtypes, with the same checks as the real kernels (dispatch/ops/norm_plan.h).
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/norm_plan.h"

namespace anatomy::meta {
namespace {

Tensor softmax_meta(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return prepare_softmax("softmax", self, dim, dtype).out;
}
Tensor log_softmax_meta(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return prepare_softmax("log_softmax", self, dim, dtype).out;
}
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_meta(const Tensor& input, IntArrayRef normalized_shape,
                                                          const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias, double) {
  RowNormPlan plan = prepare_row_norm("native_layer_norm", input, normalized_shape, weight, bias);
  const TensorOptions opts = TensorOptions().dtype(input.dtype()).device(input.device());
  return {plan.out, empty(plan.stat_shape, opts), empty(plan.stat_shape, opts)};
}
Tensor rms_norm_meta(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                     std::optional<double>) {
  return prepare_row_norm("rms_norm", input, normalized_shape, weight, std::nullopt).out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("softmax.int", ANATOMY_KERNEL(softmax_meta));
  m.impl("log_softmax.int", ANATOMY_KERNEL(log_softmax_meta));
  m.impl("native_layer_norm", ANATOMY_KERNEL(native_layer_norm_meta));
  m.impl("rms_norm", ANATOMY_KERNEL(rms_norm_meta));
}

}  // namespace anatomy::meta
