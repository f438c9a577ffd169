// The rules and shared arithmetic of the losses: the argument checks of cross_entropy's fused operators
// shared by their composite kernel (dispatch/ops/cross_entropy_rows.cpp) and the CUDA kernels
// (backends/cuda/loss/), so every backend refuses the same inputs with the same messages: the
// checks and the operands a kernel reading raw rows needs.
#pragma once

#include <optional>

#include "anatomy/core/tensor.h"

namespace anatomy {

struct CrossEntropyRowsPlan {
  int64_t rows = 0, classes = 0;
  DType acc = DType::Float32;  // the computation type: fp64 for fp64 logits, fp32 otherwise
  // With `contiguous`: logits with contiguous rows, target contiguous, weight contiguous in
  // `acc` (undefined when absent); else the arguments as given.
  Tensor logits, target, weight;
};

// logits (N, C) floating; target (N) int64; weight absent or (C) floating; one device;
// label_smoothing in [0, 1].
CrossEntropyRowsPlan prepare_cross_entropy_rows(const char* op, const Tensor& logits, const Tensor& target,
                                                const std::optional<Tensor>& weight, double label_smoothing,
                                                bool contiguous);

// The backward's operands besides prepare_cross_entropy_rows's: grad_loss and lse (N) of the
// computation type, on the logits' device (made contiguous with `contiguous`).
struct CrossEntropyRowsBackwardPlan {
  CrossEntropyRowsPlan rows;
  Tensor grad_loss, lse;
};
CrossEntropyRowsBackwardPlan prepare_cross_entropy_rows_backward(const char* op, const Tensor& grad_loss,
                                                                 const Tensor& logits, const Tensor& target,
                                                                 const std::optional<Tensor>& weight, const Tensor& lse,
                                                                 double label_smoothing, bool contiguous);

}  // namespace anatomy

namespace anatomy {

// The gradient of _cross_entropy_rows's logits, written with public operators, in prob's dtype:
// g [(1 - s) w_t (p - onehot(t)) + (s / C) (W p - w)], zero on ignored rows. The composite
// backward and the derivative (when it records a graph of itself) both call it; `prob` is the
// softmax of the logits in the computation type, passed in so that a recording caller can give
// one that depends on the logits.
Tensor cross_entropy_rows_grad(const Tensor& grad_loss, const Tensor& prob, const Tensor& target,
                               const std::optional<Tensor>& weight, int64_t ignore_index, double label_smoothing);

// softplus(-x) = log(1 + exp(-x)) as max(-x, 0) + log1p(exp(-|x|)): no overflow for any x, and
// exact where softplus's threshold would cut over. binary_cross_entropy_with_logits's loss and
// its target's gradient both use it.
Tensor softplus_of_negative(const Tensor& x);

}  // namespace anatomy
