// CUDA: native_batch_norm and native_batch_norm_backward (kernels: batch_norm.cu,
// batch_norm_backward.cu). The checks and the layout are the CPU's (dispatch/ops/
// channel_norm_rules.h): the input made dense in the layout its strides suggest, the output in
// that layout. Parameters and statistics are handed to the kernels as contiguous vectors of the
// computation dtype; running statistics that already are (float32 for fp16/bf16/fp32 inputs,
// contiguous) are updated by the kernels in place, others by operators afterwards. group_norm
// runs the composites of dispatch/ops/channel_norm.cpp.
#include <limits>
#include <tuple>

#include "anatomy/backends/cuda/channel_norm/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/channel_norm_rules.h"

namespace anatomy::cuda {
namespace {

using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using OptTensor = std::optional<Tensor>;

// A per-channel vector as the kernels read it: contiguous, of the computation dtype.
Tensor as_vector(const Tensor& t, DType d) {
  if (!t.defined()) return t;
  return (t.dtype() == d ? t : t.to(d)).contiguous();
}
const void* data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

ChannelShape shape_of(const ChannelLayout& l) { return {l.N, l.C, l.S, l.channels_last}; }

// Scratch of the computation dtype `stat`, as many elements as a launch over an `input` of this
// dtype uses (batch_norm_scratch).
Tensor scratch_for(DType input, DType stat, const ChannelShape& s, Device device) {
  return empty({batch_norm_scratch(input, s)}, TensorOptions().dtype(stat).device(device));
}

Tensor3 native_batch_norm_cuda(const Tensor& input, const OptTensor& weight, const OptTensor& bias,
                               const OptTensor& running_mean, const OptTensor& running_var, bool training,
                               double momentum, double eps) {
  const BatchNormArgs a =
      check_batch_norm("native_batch_norm", input, weight, bias, running_mean, running_var, training);
  const ChannelLayout l = channel_layout(input);
  const TensorOptions stat = TensorOptions().dtype(a.stat).device(input.device());
  Tensor y = empty_in_layout(l, TensorOptions().dtype(input.dtype()).device(input.device()));
  Tensor save_mean = empty({l.C}, stat), save_invstd = empty({l.C}, stat);
  if (l.C == 0) return {y, save_mean, save_invstd};
  if (l.N * l.S == 0) {
    // No values: the batch statistics are 0 / 0 (as on the CPU) and the running ones stay.
    if (training) {
      save_mean.fill_(std::numeric_limits<double>::quiet_NaN());
      save_invstd.fill_(std::numeric_limits<double>::quiet_NaN());
    } else {
      save_mean.copy_(a.running_mean);
      save_invstd.copy_((as_vector(a.running_var, a.stat) + eps).rsqrt());
    }
    return {y, save_mean, save_invstd};
  }
  DeviceGuard guard(input.device());
  const ChannelShape s = shape_of(l);
  const Tensor w = as_vector(a.weight, a.stat), b = as_vector(a.bias, a.stat);
  // Running statistics the kernel may update in place: the user's own tensors.
  const bool in_place = training && a.running_mean.defined() && running_mean->dtype() == a.stat &&
                        running_var->dtype() == a.stat && running_mean->is_contiguous() && running_var->is_contiguous();
  Tensor rm, rv;
  if (in_place) {
    rm = *running_mean;
    rv = *running_var;
  } else if (!training) {
    rm = as_vector(a.running_mean, a.stat);
    rv = as_vector(a.running_var, a.stat);
  }
  Tensor batch_var = empty({l.C}, stat), scratch = scratch_for(input.dtype(), a.stat, s, input.device());
  BatchNormForwardBuffers buf;
  buf.input = l.x.data_ptr();
  buf.output = y.data_ptr();
  buf.weight = data_or_null(w);
  buf.bias = data_or_null(b);
  buf.running_mean = rm.defined() ? rm.data_ptr() : nullptr;
  buf.running_var = rv.defined() ? rv.data_ptr() : nullptr;
  buf.save_mean = save_mean.data_ptr();
  buf.save_invstd = save_invstd.data_ptr();
  buf.batch_var = batch_var.data_ptr();
  buf.scratch = scratch.data_ptr();
  launch_batch_norm_forward(input.dtype(), s, buf, training, momentum, eps, current_stream());
  if (in_place) {
    running_mean->impl()->bump_version();
    running_var->impl()->bump_version();
  } else if (training) {
    update_running_stats(running_mean, running_var, save_mean, batch_var, l.N * l.S, momentum);
  }
  return {y, save_mean, save_invstd};
}

Tensor3 native_batch_norm_backward_cuda(const Tensor& grad_out, const Tensor& input, const OptTensor& weight,
                                        const OptTensor& running_mean, const OptTensor& running_var,
                                        const OptTensor& save_mean, const OptTensor& save_invstd, bool train,
                                        double eps, IntArrayRef output_mask) {
  const char* op = "native_batch_norm_backward";
  const BatchNormArgs a =
      check_batch_norm_backward(op, grad_out, input, weight, running_mean, running_var, output_mask);
  const ChannelLayout l = channel_layout(input);
  Tensor mean, invstd;
  if (!train && a.running_mean.defined()) {
    mean = as_vector(a.running_mean, a.stat);
    invstd = (as_vector(a.running_var, a.stat) + eps).rsqrt();
  } else {
    mean = as_vector(check_saved_stat(op, "save_mean", save_mean, input, l.C), a.stat);
    invstd = as_vector(check_saved_stat(op, "save_invstd", save_invstd, input, l.C), a.stat);
  }
  const TensorOptions stat = TensorOptions().dtype(a.stat).device(input.device());
  const DType param = a.weight.defined() ? a.weight.dtype() : input.dtype();
  Tensor dx, dw, db;
  if (output_mask[0]) dx = empty_in_layout(l, TensorOptions().dtype(input.dtype()).device(input.device()));
  if (output_mask[1]) dw = zeros({l.C}, stat);
  if (output_mask[2]) db = zeros({l.C}, stat);
  if (l.C > 0 && l.N * l.S > 0) {
    DeviceGuard guard(input.device());
    const ChannelShape s = shape_of(l);
    const Tensor g = dense_in_layout(grad_out, l.channels_last), w = as_vector(a.weight, a.stat);
    Tensor scratch = scratch_for(input.dtype(), a.stat, s, input.device());
    BatchNormBackwardBuffers buf;
    buf.grad = g.data_ptr();
    buf.input = l.x.data_ptr();
    buf.weight = data_or_null(w);
    buf.mean = mean.data_ptr();
    buf.invstd = invstd.data_ptr();
    buf.grad_input = dx.defined() ? dx.data_ptr() : nullptr;
    buf.grad_weight = dw.defined() ? dw.data_ptr() : nullptr;
    buf.grad_bias = db.defined() ? db.data_ptr() : nullptr;
    buf.scratch = scratch.data_ptr();
    launch_batch_norm_backward(input.dtype(), s, buf, train, current_stream());
  }
  if (dw.defined() && dw.dtype() != param) dw = dw.to(param);
  if (db.defined() && db.dtype() != param) db = db.to(param);
  return {dx, dw, db};
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("native_batch_norm", dispatch::named_kernel(&native_batch_norm_cuda, "native_batch_norm"));
  m.impl("native_batch_norm_backward",
         dispatch::named_kernel(&native_batch_norm_backward_cuda, "native_batch_norm_backward"));
}

}  // namespace anatomy::cuda
