// The rules of the pooling and upsampling operators, shared by every backend's kernels so all
// refuse the same inputs with the same messages: the argument checks, PyTorch's output-size
// rules, the layout the kernels work in, and the windows (dispatch/ops/pooling_windows.h).
#pragma once

#include <optional>
#include <vector>

#include "anatomy/core/tensor.h"
#include "anatomy/dispatch/ops/pooling_windows.h"

namespace anatomy {

// What a kernel needs: the windows, the (N, C) of the 4-D problem (N = 1 for a 3-D input), the
// layout (NHWC when channels_last, else NCHW), the shapes of the input and the result, and the
// input's dtype and device.
struct PoolPlan {
  pooling::Window2d window;
  int64_t batch = 1, channels = 0;
  bool channels_last = false;
  std::vector<int64_t> in_sizes, out_sizes;
  DType dtype = DType::Float32;
  Device device;

  MemoryFormat format() const { return channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous; }
  // `t` dense in the plan's layout (the tensor itself when it already is).
  Tensor dense(const Tensor& t) const { return t.contiguous(format()); }
  // An uninitialized result of `sizes` in the plan's layout.
  Tensor empty_result(const std::vector<int64_t>& sizes, DType dtype) const;
};

// The layout a 4-D tensor's strides suggest (PyTorch's suggest_memory_format): ChannelsLast
// when C has the smallest stride, then W, H and N, as a channels_last tensor's do.
MemoryFormat pool_memory_format(const Tensor& t);

PoolPlan plan_max_pool2d(const char* op, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
PoolPlan plan_avg_pool2d(const char* op, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                         IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                         std::optional<int64_t> divisor_override);
PoolPlan plan_adaptive_avg_pool2d(const char* op, const Tensor& self, IntArrayRef output_size);
// Upsampling (kind Nearest or Bilinear) of an input of `input_size` (4 ints); `like` gives the
// dtype, device and layout (the input forward, grad_output backward).
PoolPlan plan_upsample2d(const char* op, pooling::WindowKind kind, const Tensor& like, IntArrayRef input_size,
                         IntArrayRef output_size, bool align_corners, std::optional<double> scales_h,
                         std::optional<double> scales_w);

// The backward operators' plans: the forward's, with grad_output checked against the forward
// result (its shape, and self's dtype and device) and max pooling's indices too (int64, the
// result's shape, on self's device). Backward takes floating dtypes only, as PyTorch's.
PoolPlan plan_max_pool2d_backward(const char* op, const Tensor& grad_output, const Tensor& self,
                                  IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                                  IntArrayRef dilation, bool ceil_mode, const Tensor& indices);
PoolPlan plan_avg_pool2d_backward(const char* op, const Tensor& grad_output, const Tensor& self,
                                  IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                                  bool count_include_pad, std::optional<int64_t> divisor_override);
PoolPlan plan_adaptive_avg_pool2d_backward(const char* op, const Tensor& grad_output, const Tensor& self);
PoolPlan plan_upsample2d_backward(const char* op, pooling::WindowKind kind, const Tensor& grad_output,
                                  IntArrayRef input_size, IntArrayRef output_size, bool align_corners,
                                  std::optional<double> scales_h, std::optional<double> scales_w);

}  // namespace anatomy
