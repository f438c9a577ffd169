// The loss room's launchers: cross_entropy's fused CUDA kernels (cross_entropy.cu), called by
// cross_entropy_cuda.cpp with prepare_cross_entropy_rows's operands (dispatch/ops/loss_rules.h):
// logits with contiguous rows (N, C) of `dtype`, int64 targets, and the weight, losses, lse and
// gradients of the rows in the computation type A (fp32, or fp64 for fp64 logits).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

struct CrossEntropyRowsArgs {
  DType dtype = DType::Float32;  // the logits'
  const void* logits = nullptr;  // (rows, classes), row r at logits + r * classes
  const int64_t* target = nullptr;
  const void* weight = nullptr;  // A[classes], or null
  int64_t rows = 0, classes = 0, ignore_index = -100;
  double label_smoothing = 0;
};

// Each row's loss and log-sum-exp (A[rows] each), in one read of the row. A target outside
// [0, classes) that is not ignore_index is reported through `sink` and gives a loss of 0.
void launch_cross_entropy_rows(const CrossEntropyRowsArgs& a, void* loss, void* lse, const IndexErrorSink& sink,
                               cudaStream_t stream);

// The logits' gradient (rows, classes) of `dtype`, contiguous, from each row's loss gradient and
// lse (A[rows]) and the weights' sum (a device A, or null without weights), in one read of each
// row. Ignored rows, and rows whose target is out of range, get zeros.
void launch_cross_entropy_rows_backward(const CrossEntropyRowsArgs& a, const void* grad_loss, const void* lse,
                                        const void* weight_sum, void* grad_logits, cudaStream_t stream);

}  // namespace anatomy::cuda
