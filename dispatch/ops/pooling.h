// Pooling and upsampling over the last two dims of (N, C, H, W) or (C, H, W) inputs, as
// PyTorch's torch.nn.functional: max and average pooling, adaptive average pooling, nearest and
// bilinear upsampling, each an aten operator with PyTorch's schema and a backward operator that
// is differentiable again. Results keep the input's layout (channels_last in, channels_last out).
// Integer lists of one element stand for both dims; an empty stride means stride = kernel_size.
#pragma once

#include <optional>
#include <tuple>

#include "anatomy/core/tensor.h"

namespace anatomy {

// The maximum of each window and its position, an int64 index into the flattened H * W plane of
// its (n, c), as PyTorch's. NaN wins (propagates). ceil_mode rounds the output size up, as long
// as the last window starts inside the input or its left padding.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                   IntArrayRef padding = {0}, IntArrayRef dilation = {1},
                                                   bool ceil_mode = false);
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  IntArrayRef dilation = {1}, bool ceil_mode = false);
// grad_output added at the saved indices (windows that overlap add up), shaped like self.
Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices);

// The mean of each window: divided by divisor_override when given, else by the window's size
// counting the padding (count_include_pad) or only the input elements under it.
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override);

// Output cell (i, j) is the mean of rows [floor(i H / OH), ceil((i + 1) H / OH)) and the columns
// likewise. adaptive_avg_pool2d is the composite over _adaptive_avg_pool2d.
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
Tensor _adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self);

// (N, C, H, W) inputs only, as PyTorch's. Output pixel o reads input floor(o * s), s = 1 / scale
// when a positive scale is given, else in / out (computed in float, as PyTorch's).
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);
Tensor upsample_nearest2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                   std::optional<double> scales_h = std::nullopt,
                                   std::optional<double> scales_w = std::nullopt);
// Bilinear interpolation; with align_corners the corner pixels' centres line up (and the scales
// are ignored), else source = s (o + 0.5) - 0.5 clamped at 0, s as for nearest.
Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h = std::nullopt,
                           std::optional<double> scales_w = std::nullopt);
Tensor upsample_bilinear2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                    bool align_corners, std::optional<double> scales_h = std::nullopt,
                                    std::optional<double> scales_w = std::nullopt);

}  // namespace anatomy
