// The convolutions written with other operators: the forward as im2col and one batched matrix
// product (a transposed convolution as a plain one over the input spread out by the stride),
// and the three gradients as convolutions (dispatch/ops/convolution_matmul.cpp). They serve
// every backend and dtype that has no convolution kernel of its own (CPU fp16 and fp64, a
// PrivateUse1 backend), and the gradients serve the derivative when a graph of the backward is
// recorded (double backward), since they call `convolution`, which is differentiable.
#pragma once

#include <array>
#include <tuple>

#include "anatomy/dispatch/ops/convolution_rules.h"

namespace anatomy {

// convolution's value, from checked arguments (g from check_convolution).
Tensor convolution_via_matmul(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                              const ConvGeometry& g);

// convolution's gradients as convolutions and a sum; undefined where output_mask is false.
std::tuple<Tensor, Tensor, Tensor> convolution_backward_via_convolutions(const Tensor& grad_output, const Tensor& input,
                                                                         const Tensor& weight, const ConvGeometry& g,
                                                                         std::array<bool, 3> output_mask);

}  // namespace anatomy
