// Convolutions: the general `convolution` operator (1-, 2- and 3-d, transposed or not, grouped),
// its backward, and the conv1d / conv2d / conv_transpose2d spellings (dispatch/ops/convolution.cpp).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "anatomy/core/tensor.h"

namespace anatomy {

// input (N, C_in, *spatial) or unbatched (C_in, *spatial); weight (C_out, C_in / groups, *kernel),
// or (C_in, C_out / groups, *kernel) when transposed; bias (C_out). stride, padding, dilation and
// output_padding give one value per spatial dim, or one value for all of them. The output is
// channels_last when the input or the weight is (PyTorch's rule), else contiguous.
Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups);

// The gradients of convolution's input, weight and bias from grad_output; a result is undefined
// where output_mask is false. bias_sizes: the bias's shape (None when there was none).
std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output, const Tensor& input,
                                                        const Tensor& weight, OptionalIntArrayRef bias_sizes,
                                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                        bool transposed, IntArrayRef output_padding, int64_t groups,
                                                        std::array<bool, 3> output_mask);

// The padding of conv1d / conv2d given by name: "valid" (none) or "same". A type of its own, not
// std::string_view, so that a braced list of ints (`{0, 0}`, which would also make a
// string_view from a pointer and a length) picks the overload that takes ints.
// A string literal binds to the array constructor, and a literal 0 binds to none (it could to a
// const char*, as a null pointer).
struct PaddingMode {
  std::string_view name;
  template <size_t N>
  PaddingMode(const char (&n)[N]) : name(n) {}    // NOLINT(google-explicit-constructor): "same" reads as the mode
  PaddingMode(std::string_view n) : name(n) {}    // NOLINT(google-explicit-constructor)
  PaddingMode(const std::string& n) : name(n) {}  // NOLINT(google-explicit-constructor)
};

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
// padding "valid" (none) or "same" (the output as long as the input; stride must be 1; an odd
// total padding puts the extra element on the right, as PyTorch does).
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              PaddingMode padding, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              PaddingMode padding, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});

}  // namespace anatomy
