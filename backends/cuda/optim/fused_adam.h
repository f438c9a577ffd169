// Launcher of the multi-tensor Adam kernel (fused_adam.cu), called by fused_adam_cuda.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// One parameter's contiguous tensors, all of one dtype: param, grad, exp_avg, exp_avg_sq, and with
// a count on the device (_fused_adam_capturable_) its fp64 step.
struct AdamTensors {
  void* param;
  const void* grad;
  void* exp_avg;
  void* exp_avg_sq;
  int64_t numel;
  double* step = nullptr;
};

// The bias corrections are used for entries without a step; an entry with one has its own, formed
// on the device from the count.
struct AdamHyper {
  double lr, beta1, beta2, weight_decay, eps, bias_correction1, bias_correction2;
  bool decoupled_weight_decay;
};

// Updates every entry (all of `dtype`, floating) on the current device, many tensors per launch:
// each block takes a chunk of one tensor, and one launch holds up to 32 tensors and 320 blocks.
// The entries' steps, where they have them, each advance by one first (one more launch per 256).
void launch_fused_adam(DType dtype, const std::vector<AdamTensors>& entries, const AdamHyper& h, cudaStream_t stream);

}  // namespace anatomy::cuda
