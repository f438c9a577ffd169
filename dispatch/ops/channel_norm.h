// Batch and group normalization: per-channel statistics of (N, C, *) inputs. The kernels:
// backends/cpu/channel_norm_cpu.cpp, backends/meta/channel_norm_meta.cpp; the backward operators
// and the fallback of backends without their own kernels are composites of public operators
// (dispatch/ops/channel_norm.cpp). Results keep the input's layout (channels_last in,
// channels_last out).
#pragma once

#include <array>
#include <optional>
#include <tuple>

#include "anatomy/core/tensor.h"

namespace anatomy {

// Normalizes each channel (dim 1) of an input of rank >= 2 over the batch and spatial dims.
// training: the batch's mean and biased variance, and running_mean / running_var (when given)
// updated in place: r = (1 - momentum) r + momentum s, the variance unbiased (n / (n - 1)).
// Otherwise the running statistics. A float16/bfloat16 input may take float32 weight, bias and
// running statistics; the statistics are computed in float32 (fp64 for fp64).
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps);
// The same, also returning save_mean and save_invstd (shape [C]; float32 for a float16/bfloat16
// input): the batch's mean and 1/sqrt(var + eps) when training, the running statistics' in eval.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     const std::optional<Tensor>& running_mean,
                                                     const std::optional<Tensor>& running_var, bool training,
                                                     double momentum, double eps);
// The input, weight and bias gradients of native_batch_norm (undefined where output_mask is
// false). train: the statistics are save_mean and save_invstd; eval: the running statistics
// (save_mean / save_invstd when they are absent).
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const std::optional<Tensor>& weight,
                                                              const std::optional<Tensor>& running_mean,
                                                              const std::optional<Tensor>& running_var,
                                                              const std::optional<Tensor>& save_mean,
                                                              const std::optional<Tensor>& save_invstd, bool train,
                                                              double eps, std::array<bool, 3> output_mask);

// Splits the C channels into num_groups groups and normalizes each (sample, group) over its
// channels and spatial dims; weight and bias are per channel.
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
// The same with the shape spelled out (input of N * C * HxW elements), also returning each
// (sample, group)'s mean and rstd, of shape (N, group).
std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps);
std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& weight, int64_t N, int64_t C,
                                                              int64_t HxW, int64_t group,
                                                              std::array<bool, 3> output_mask);

}  // namespace anatomy
