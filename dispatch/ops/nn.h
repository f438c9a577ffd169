// Neural-network building blocks: softmax, normalizations, dropout and attention.
#pragma once

#include <array>
#include <optional>
#include <tuple>

#include "anatomy/core/tensor.h"

namespace anatomy {

// Numerically stable (the max is subtracted first); fp16/bf16 compute in fp32. `dtype` casts
// the input before the operation.
Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);

// Layer normalization over the trailing `normalized_shape` dims.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
// The same, also returning the mean and 1/sqrt(var + eps) of each normalized row (shape: the
// leading dims followed by ones), which backward needs.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps);
// x / sqrt(mean(x^2) + eps) * weight; eps defaults to the dtype's machine epsilon.
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                std::optional<double> eps = std::nullopt);

// The backward operators (dispatch/ops/nn_backward.cpp): the gradient of softmax's (or
// log_softmax's) input from grad_output and the forward's output, cast to input_dtype.
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype);
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype);
// native_layer_norm's input, weight and bias gradients from its saved mean and rstd; a result
// is undefined where output_mask is false (the weight's also when weight is absent). The
// gradients of the mean and rstd outputs are not included (PyTorch's formula drops them).
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& weight,
                                                              const std::optional<Tensor>& bias,
                                                              std::array<bool, 3> output_mask);
// rms_norm's input and weight gradients; the row statistics are recomputed from the input
// (rms_norm saves none). eps as rms_norm's.
std::tuple<Tensor, Tensor> _rms_norm_backward(const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
                                              const std::optional<Tensor>& weight, std::optional<double> eps,
                                              std::array<bool, 2> output_mask);

// Zeroes each element with probability p (from the device's generator) and scales the rest
// by 1 / (1 - p); the identity when !train or p == 0.
Tensor dropout(const Tensor& input, double p, bool train);
// The output and the keep-mask (bool) it used.
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, bool train);

// softmax(q k^T * scale + mask) v, as a composite of matmul, softmax and the element-wise ops
// (the "math" version). q: [..., L, E], k: [..., S, E], v: [..., S, Ev]. attn_mask is bool
// (true = attend) or additive float, broadcast to [..., L, S]; is_causal masks j > i;
// scale defaults to 1/sqrt(E).
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = std::nullopt, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt);

}  // namespace anatomy
