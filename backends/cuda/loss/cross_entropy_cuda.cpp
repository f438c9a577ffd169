// CUDA: cross_entropy's fused operators, _cross_entropy_rows and _cross_entropy_rows_backward,
// over the CPU's rules (dispatch/ops/loss_rules.h); the kernels are in cross_entropy.cu. A bad
// target is reported by the forward kernel through the device's IndexErrorSink and raised as the
// CPU's IndexError at the next wait (Note [Bad indices on the device], index_error.h).
#include <tuple>

#include "anatomy/backends/cuda/loss/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/loss_rules.h"

namespace anatomy::cuda {
namespace {

CrossEntropyRowsArgs rows_args(const CrossEntropyRowsPlan& p, int64_t ignore_index, double label_smoothing) {
  CrossEntropyRowsArgs a;
  a.dtype = p.logits.dtype();
  a.logits = p.logits.data_ptr();
  a.target = static_cast<const int64_t*>(p.target.data_ptr());
  a.weight = p.weight.defined() ? p.weight.data_ptr() : nullptr;
  a.rows = p.rows;
  a.classes = p.classes;
  a.ignore_index = ignore_index;
  a.label_smoothing = label_smoothing;
  return a;
}

std::tuple<Tensor, Tensor> cross_entropy_rows_cuda(const Tensor& logits, const Tensor& target,
                                                   const std::optional<Tensor>& weight, int64_t ignore_index,
                                                   double label_smoothing) {
  const char* op = "_cross_entropy_rows";
  const CrossEntropyRowsPlan p = prepare_cross_entropy_rows(op, logits, target, weight, label_smoothing, true);
  DeviceGuard guard(logits.device());
  const TensorOptions options = TensorOptions().dtype(p.acc).device(logits.device());
  Tensor loss = naming_oom(op, [&] { return empty({p.rows}, options); });
  Tensor lse = naming_oom(op, [&] { return empty({p.rows}, options); });
  launch_cross_entropy_rows(rows_args(p, ignore_index, label_smoothing), loss.data_ptr(), lse.data_ptr(),
                            index_error_sink(current_device(), "cross_entropy"), current_stream());
  return {loss, lse};
}

Tensor cross_entropy_rows_backward_cuda(const Tensor& grad_loss, const Tensor& logits, const Tensor& target,
                                        const std::optional<Tensor>& weight, const Tensor& lse, int64_t ignore_index,
                                        double label_smoothing) {
  const char* op = "_cross_entropy_rows_backward";
  const CrossEntropyRowsBackwardPlan p =
      prepare_cross_entropy_rows_backward(op, grad_loss, logits, target, weight, lse, label_smoothing, true);
  DeviceGuard guard(logits.device());
  Tensor dx = naming_oom(op, [&] { return empty({p.rows.rows, p.rows.classes}, logits.options()); });
  const Tensor weight_sum = p.rows.weight.defined() ? p.rows.weight.sum() : Tensor();
  launch_cross_entropy_rows_backward(rows_args(p.rows, ignore_index, label_smoothing), p.grad_loss.data_ptr(),
                                     p.lse.data_ptr(), weight_sum.defined() ? weight_sum.data_ptr() : nullptr,
                                     dx.data_ptr(), current_stream());
  return dx;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("_cross_entropy_rows", ANATOMY_KERNEL(cross_entropy_rows_cuda));
  m.impl("_cross_entropy_rows_backward", ANATOMY_KERNEL(cross_entropy_rows_backward_cuda));
}

}  // namespace anatomy::cuda
