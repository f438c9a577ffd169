// nn::init: PyTorch's torch.nn.init fills, in place under no-grad, on any device, drawing from the
// tensor's device generator (anatomy::manual_seed makes them repeatable).
//
//   nn::init::kaiming_uniform_(w, std::sqrt(5.0));  // Linear's default weight
//   nn::init::trunc_normal_(w, 0, 0.02, -0.04, 0.04);
#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "anatomy/anatomy.h"

namespace anatomy::nn::init {

// The recommended gain for a nonlinearity: linear, conv*, sigmoid: 1; tanh: 5/3; relu: sqrt(2);
// leaky_relu: sqrt(2 / (1 + slope^2)) (param is the slope, 0.01 by default); selu: 3/4.
double calculate_gain(std::string_view nonlinearity, std::optional<double> param = std::nullopt);

// PyTorch's _calculate_fan_in_and_fan_out: a tensor of at least 2 dims; fan_in = size(1) * the
// receptive field (the product of the dims after the second), fan_out = size(0) * the same.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

const Tensor& uniform_(const Tensor& tensor, double a = 0.0, double b = 1.0);
const Tensor& normal_(const Tensor& tensor, double mean = 0.0, double std = 1.0);
const Tensor& constant_(const Tensor& tensor, const Scalar& value);
const Tensor& zeros_(const Tensor& tensor);
const Tensor& ones_(const Tensor& tensor);

// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)); N(0, gain * sqrt(2 / (fan_in + fan_out))).
const Tensor& xavier_uniform_(const Tensor& tensor, double gain = 1.0);
const Tensor& xavier_normal_(const Tensor& tensor, double gain = 1.0);

// std = gain(nonlinearity, a) / sqrt(fan) with fan from mode ("fan_in" or "fan_out");
// uniform: U(-sqrt(3) std, sqrt(3) std).
const Tensor& kaiming_uniform_(const Tensor& tensor, double a = 0.0, std::string_view mode = "fan_in",
                               std::string_view nonlinearity = "leaky_relu");
const Tensor& kaiming_normal_(const Tensor& tensor, double a = 0.0, std::string_view mode = "fan_in",
                              std::string_view nonlinearity = "leaky_relu");

// N(mean, std) restricted to [a, b], by PyTorch's inverse-CDF method (uniform in the CDF's range,
// then erfinv), clamped to [a, b] against rounding.
const Tensor& trunc_normal_(const Tensor& tensor, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0);

}  // namespace anatomy::nn::init
