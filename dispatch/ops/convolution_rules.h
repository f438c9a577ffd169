// The rules of the convolutions: argument checks, the geometry (every list expanded to one value
// per spatial dim) and the output's shape and layout, shared by every backend's kernels
// (backends/cpu/conv_onednn.cpp, backends/cuda/conv/, backends/meta/) and the composites
// (dispatch/ops/convolution_matmul.cpp), so all refuse the same inputs with the same messages.
#pragma once

#include <optional>
#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy {

struct ConvGeometry {
  int64_t spatial = 0;  // 1, 2 or 3
  std::vector<int64_t> stride, padding, dilation, output_padding, kernel;
  bool transposed = false;
  int64_t groups = 1;
  int64_t in_channels = 0, out_channels = 0;
  std::vector<int64_t> output_shape;  // (N, C_out, *spatial)
  // ChannelsLast (4-D) or ChannelsLast3d (5-D) when the input or the weight is laid out so, as
  // PyTorch's cudnn_conv_suggest_memory_format; else Contiguous.
  MemoryFormat format = MemoryFormat::Contiguous;
};

// input (N, C_in, *spatial), weight (C_out, C_in / groups, *kernel) or, transposed,
// (C_in, C_out / groups, *kernel); bias absent or (C_out); one floating dtype and one device for
// all; stride and dilation > 0, padding and output_padding >= 0 (output_padding < stride or
// dilation, and only when transposed); the kernel no larger than the padded input; an output
// of at least one element per spatial dim.
ConvGeometry check_convolution(const char* op, const Tensor& input, const Tensor& weight,
                               const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                               IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups);

// convolution_backward's checks: the forward's, and grad_output of the forward's output shape,
// dtype and device.
ConvGeometry check_convolution_backward(const char* op, const Tensor& grad_output, const Tensor& input,
                                        const Tensor& weight, OptionalIntArrayRef bias_sizes, IntArrayRef stride,
                                        IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                        IntArrayRef output_padding, int64_t groups, IntArrayRef output_mask);

// The output of convolution, allocated in the geometry's shape and layout.
Tensor empty_convolution_output(const ConvGeometry& g, const Tensor& input);

// t dense in the geometry's layout (itself when it already is).
Tensor dense_in(const Tensor& t, MemoryFormat format);

}  // namespace anatomy
