// The front half of batch_norm and group_norm shared by every backend: the argument checks
// (one message per mistake, whichever backend runs), the statistics' dtype, the layout the
// kernels read and write, and the backward formulas written with public operators that the
// backward composites and autograd's derivatives share (Note [Fused backward unless
// create_graph] in autograd/derivatives_nn.cpp).
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy {

// How a kernel sees an (N, C, *) input: dense, either contiguous (N, C, S) or with the channels
// innermost (N, S, C: channels_last and its 3-d form); S is the product of the spatial dims.
struct ChannelLayout {
  Tensor x;  // the input made dense in the layout its strides suggest
  int64_t N = 0, C = 0, S = 1;
  bool channels_last = false;
  // The flat position of element (n, c, s).
  int64_t at(int64_t n, int64_t c, int64_t s) const {
    return channels_last ? (n * S + s) * C + c : (n * C + c) * S + s;
  }
};

// Whether `t` (rank 4 or 5) has strides like channels_last: channels innermost, then the spatial
// dims in order, the batch outermost. A tensor that is also contiguous is not (PyTorch's
// suggest_memory_format picks contiguous then).
bool suggests_channels_last(const Tensor& t);
// `t` made dense with the channels innermost (channels_last) or contiguous.
Tensor dense_in_layout(const Tensor& t, bool channels_last);
ChannelLayout channel_layout(const Tensor& input);
// An empty tensor of `sizes` (N, C, *) laid out like `like` (which ChannelLayout::at reads).
Tensor empty_in_layout(const ChannelLayout& like, TensorOptions options);

// The dtype of the statistics and parameter results: float32 for a float16/bfloat16 input
// with float32 parameters (or, for batch_norm, always: PyTorch's CUDA kernels), else the
// input's.
DType batch_norm_stat_dtype(DType input);

struct BatchNormArgs {
  Tensor weight, bias, running_mean, running_var;  // undefined when absent
  DType stat = DType::Float32;
};
// input: floating, rank >= 2; weight, bias and the running statistics: C elements on the
// input's device, of the input's dtype or float32 for a float16/bfloat16 input; both running
// statistics or neither.
BatchNormArgs check_batch_norm_params(const char* op, const Tensor& input, const std::optional<Tensor>& weight,
                                      const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                                      const std::optional<Tensor>& running_var);
// The forward's: those, the running statistics required in eval, and more than one value per
// channel when training.
BatchNormArgs check_batch_norm(const char* op, const Tensor& input, const std::optional<Tensor>& weight,
                               const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                               const std::optional<Tensor>& running_var, bool training);

struct GroupNormArgs {
  Tensor weight, bias;  // undefined when absent
  DType stat = DType::Float32;
};
// input: floating, rank >= 2, of N * C * HxW elements with N and C its first two dims; group
// positive and dividing C; weight and bias: C elements as batch_norm's.
GroupNormArgs check_group_norm(const char* op, const Tensor& input, const std::optional<Tensor>& weight,
                               const std::optional<Tensor>& bias, int64_t N, int64_t C, int64_t HxW, int64_t group);

// A backward operator's grad_out: the input's shape, dtype and device.
void check_same_as_input(const char* op, const char* what, const Tensor& t, const Tensor& input);
// A saved statistic: batch_norm's (C elements, returned flat), group_norm's (N x group).
Tensor check_saved_stat(const char* op, const char* what, const std::optional<Tensor>& t, const Tensor& input,
                        int64_t C);
void check_group_stat(const char* op, const char* what, const Tensor& t, const Tensor& input, int64_t N, int64_t group);

// The checks every backend's native_batch_norm_backward makes first: the output mask, the
// parameters (batch_norm's, without a bias), grad_out like the input.
BatchNormArgs check_batch_norm_backward(const char* op, const Tensor& grad_out, const Tensor& input,
                                        const std::optional<Tensor>& weight, const std::optional<Tensor>& running_mean,
                                        const std::optional<Tensor>& running_var, IntArrayRef output_mask);
// Likewise for native_group_norm_backward, with its saved mean and rstd.
GroupNormArgs check_group_norm_backward(const char* op, const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                                        const Tensor& rstd, const std::optional<Tensor>& weight, int64_t N, int64_t C,
                                        int64_t HxW, int64_t group, IntArrayRef output_mask);

// Training's update of the running statistics in place (each in its own dtype and shape):
// r = (1 - momentum) r + momentum s, the batch variance `var` (biased) made unbiased with
// count / (count - 1). Nothing changes for an empty batch.
void update_running_stats(const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                          const Tensor& mean, const Tensor& var, int64_t count, double momentum);

// The dims a batch_norm statistic reduces (all but 1) and the shape [1, C, 1, ...] it is
// broadcast back with.
std::vector<int64_t> batch_norm_reduced_dims(int64_t ndim);
std::vector<int64_t> per_channel_shape(int64_t ndim, int64_t C);

// The backward formulas with public operators (differentiable again). mean and invstd are
// broadcastable to the input (per channel for batch_norm); train: the statistics came from
// the batch, so dx gets the terms of their dependence on x. Results are cast to the input's
// (dx) and the weight's (dw, db; the input's without a weight) dtypes; undefined where the mask
// is false.
std::vector<Tensor> batch_norm_backward_formula(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                const Tensor& mean, const Tensor& invstd, bool train,
                                                std::array<bool, 3> mask);
// group_norm's: mean and rstd of shape (N, group).
std::vector<Tensor> group_norm_backward_formula(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                const Tensor& mean, const Tensor& rstd, int64_t group,
                                                std::array<bool, 3> mask);

}  // namespace anatomy
