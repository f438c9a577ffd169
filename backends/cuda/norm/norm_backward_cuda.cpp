// CUDA: the fused backward operators of softmax, log_softmax, layer_norm and rms_norm
// (_softmax_backward_data, _log_softmax_backward_data, native_layer_norm_backward,
// _rms_norm_backward) over the plans of dispatch/ops/norm_backward_plan.h, with the composite's
// checks and results (dispatch/ops/nn_backward.cpp); the kernels are in softmax_backward.cu and
// norm_backward.cu. The parameter gradients' partial sums live in a scratch tensor from the
// caching allocator (Note [Deterministic parameter gradients]).
#include <limits>
#include <tuple>

#include "anatomy/backends/cuda/norm/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/norm_backward_plan.h"

namespace anatomy::cuda {
namespace {

template <bool Log>
Tensor softmax_backward_cuda(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype) {
  SoftmaxBackwardPlan p = prepare_softmax_backward(Log ? "_log_softmax_backward_data" : "_softmax_backward_data",
                                                   grad_output, output, dim, input_dtype, true);
  Tensor dx = empty(output.sizes(), TensorOptions().dtype(output.dtype()).device(output.device()));
  if (dx.numel() > 0) {
    DeviceGuard guard(output.device());
    launch_softmax_backward(Log, output.dtype(), p.grad.data_ptr(), p.output.data_ptr(), dx.data_ptr(), p.outer, p.size,
                            p.inner, current_stream());
  }
  return dx.dtype() == input_dtype ? dx : dx.to(input_dtype);
}

const void* data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }
void* mutable_data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// The shared part of both normalizations: dx (when wanted) in plan.rows.out, dw and db (when
// wanted) of normalized_shape, in the input's dtype.
struct NormGrads {
  Tensor dx, dw, db;
};
NormGrads run_norm_backward(NormBackwardKind kind, const NormBackwardPlan& p, const Tensor& input,
                            IntArrayRef normalized_shape, double eps, bool want_dx, bool want_dw, bool want_db) {
  const TensorOptions opts = TensorOptions().dtype(input.dtype()).device(input.device());
  NormGrads r;
  if (want_dx) r.dx = p.rows.out;
  if (want_dw) r.dw = empty(normalized_shape, opts);
  if (want_db) r.db = empty(normalized_shape, opts);
  if (!want_dx && !want_dw && !want_db) return r;
  DeviceGuard guard(input.device());
  if (input.numel() == 0) {
    // No rows (or empty rows): the column sums are zeros, dx has no elements.
    if (r.dw.defined()) r.dw.zero_();
    if (r.db.defined()) r.db.zero_();
    return r;
  }
  const int64_t count = norm_backward_partials(input.dtype(), p.rows.rows, p.rows.cols, want_dw || want_db);
  Tensor scratch;
  if (count > 0) {
    const DType acc = input.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
    scratch = empty({count}, TensorOptions().dtype(acc).device(input.device()));
  }
  NormBackwardBuffers b;
  b.grad = p.grad.data_ptr();
  b.input = p.rows.input.data_ptr();
  b.weight = data_or_null(p.rows.weight);
  b.mean = data_or_null(p.mean);
  b.rstd = data_or_null(p.rstd);
  b.grad_input = mutable_data_or_null(r.dx);
  b.grad_weight = mutable_data_or_null(r.dw);
  b.grad_bias = mutable_data_or_null(r.db);
  b.partials = mutable_data_or_null(scratch);
  launch_norm_backward(kind, input.dtype(), b, p.rows.rows, p.rows.cols, eps, current_stream());
  return r;
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward_cuda(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, IntArrayRef output_mask) {
  const char* op = "native_layer_norm_backward";
  check_output_mask(op, output_mask, 3);
  ANATOMY_CHECK(mean.defined() && rstd.defined(), ValueError, "{}: mean and rstd must be defined", op);
  NormBackwardPlan p = prepare_norm_backward(op, grad_out, input, normalized_shape, mean, rstd, weight, bias, true);
  NormGrads r = run_norm_backward(NormBackwardKind::Layer, p, input, normalized_shape, 0.0, output_mask[0] != 0,
                                  output_mask[1] != 0 && p.rows.weight.defined(), output_mask[2] != 0);
  return {r.dx, r.dw, r.db};
}

std::tuple<Tensor, Tensor> rms_norm_backward_cuda(const Tensor& grad_out, const Tensor& input,
                                                  IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                                                  std::optional<double> eps, IntArrayRef output_mask) {
  const char* op = "_rms_norm_backward";
  check_output_mask(op, output_mask, 2);
  NormBackwardPlan p =
      prepare_norm_backward(op, grad_out, input, normalized_shape, Tensor(), Tensor(), weight, std::nullopt, true);
  // The default eps is the input dtype's machine epsilon, as rms_norm's.
  double e = 0;
  visit_dtype(input.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T> || is_reduced_float_v<T>) {
      e = eps ? *eps : convert<double>(std::numeric_limits<T>::epsilon());
    }
  });
  NormGrads r = run_norm_backward(NormBackwardKind::Rms, p, input, normalized_shape, e, output_mask[0] != 0,
                                  output_mask[1] != 0 && p.rows.weight.defined(), false);
  return {r.dx, r.dw};
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("_softmax_backward_data", dispatch::named_kernel(&softmax_backward_cuda<false>, "softmax_backward_cuda"));
  m.impl("_log_softmax_backward_data",
         dispatch::named_kernel(&softmax_backward_cuda<true>, "log_softmax_backward_cuda"));
  m.impl("native_layer_norm_backward", ANATOMY_KERNEL(native_layer_norm_backward_cuda));
  m.impl("_rms_norm_backward", ANATOMY_KERNEL(rms_norm_backward_cuda));
}

}  // namespace anatomy::cuda
