// Launcher of the multi-tensor Adam kernel (fused_adam.cu), called by fused_adam_cuda.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// One parameter's contiguous tensors, all of one dtype: param, grad, exp_avg, exp_avg_sq.
struct AdamTensors {
  void* param;
  const void* grad;
  void* exp_avg;
  void* exp_avg_sq;
  int64_t numel;
};

struct AdamHyper {
  double lr, beta1, beta2, weight_decay, eps, bias_correction1, bias_correction2;
  bool decoupled_weight_decay;
};

// Updates every entry (all of `dtype`, floating) on the current device, many tensors per launch:
// each block takes a chunk of one tensor, and one launch holds up to kAdamTensorsPerLaunch
// tensors and kAdamBlocksPerLaunch blocks.
void launch_fused_adam(DType dtype, const std::vector<AdamTensors>& entries, const AdamHyper& h, cudaStream_t stream);

}  // namespace anatomy::cuda
