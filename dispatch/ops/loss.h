// Loss functions, as PyTorch's torch.nn.functional losses: each is an aten operator (schemas as
// PyTorch's), differentiable in its input and, where PyTorch's is, in its target.
#pragma once

#include <optional>
#include <tuple>

#include "anatomy/core/tensor.h"

namespace anatomy {

// How a loss folds its per-element values, with PyTorch's numbering (the schemas take an int;
// PyTorch's at::Reduction::Mean is LossReduction::Mean here).
namespace LossReduction {
enum LossReduction : int64_t { None = 0, Mean = 1, Sum = 2 };
}

// (input - target)^2, |input - target|, and the Huber-like smooth L1 (0.5 d^2 / beta where
// |d| < beta, |d| - 0.5 beta elsewhere; L1 when beta is 0). input and target broadcast.
Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction = LossReduction::Mean);
Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction = LossReduction::Mean);
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction = LossReduction::Mean,
                      double beta = 1.0);

// -w [t log sigmoid(x) pos_weight + (1 - t) log(1 - sigmoid(x))], computed from the logits x
// without overflow; pos_weight broadcasts against the classes (the last dim).
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target,
                                        const std::optional<Tensor>& weight = std::nullopt,
                                        const std::optional<Tensor>& pos_weight = std::nullopt,
                                        int64_t reduction = LossReduction::Mean);

// The negative log likelihood of class indices: self holds log-probabilities, (C), (N, C) or
// (N, C, d1, ...); target the classes, (), (N) or (N, d1, ...), int64. Elements whose target is
// ignore_index count for nothing; the mean divides by the sum of the counted targets' weights.
Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                int64_t reduction = LossReduction::Mean, int64_t ignore_index = -100);

// log_softmax over the class dim (dim 1, or 0 for a 1-D input) followed by nll_loss, for class
// indices; or, when target has self's shape and a floating dtype, class probabilities:
// -sum_c w_c t_c log_softmax(x)_c. label_smoothing in [0, 1] mixes the target with the uniform
// distribution. Class indices go through one fused operator (_cross_entropy_rows), whose CUDA
// kernels read the logits once forward and once backward.
Tensor cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                     int64_t reduction = LossReduction::Mean, int64_t ignore_index = -100,
                     double label_smoothing = 0.0);

// cross_entropy's fused operator over rows: logits (N, C), target (N) int64, weight (C) or none.
// Returns each row's loss, (1 - s) w_t (lse - x_t) + (s / C) sum_c w_c (lse - x_c) with s the
// label smoothing (0 where the target is ignore_index), and each row's log-sum-exp lse, both in
// the computation type (fp32 for fp16, bf16 and fp32 logits; fp64 for fp64).
std::tuple<Tensor, Tensor> _cross_entropy_rows(const Tensor& logits, const Tensor& target,
                                               const std::optional<Tensor>& weight, int64_t ignore_index,
                                               double label_smoothing);
// The gradient of the logits from the rows' loss gradient (N) and the saved lse:
// g [(1 - s) w_t (p - onehot(t)) + (s / C) (W p - w)], p = exp(x - lse), W = sum_c w_c; zero
// rows where the target is ignored. In the logits' dtype.
Tensor _cross_entropy_rows_backward(const Tensor& grad_loss, const Tensor& logits, const Tensor& target,
                                    const std::optional<Tensor>& weight, const Tensor& lse, int64_t ignore_index,
                                    double label_smoothing);

}  // namespace anatomy
