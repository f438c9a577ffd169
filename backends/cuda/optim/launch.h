// The optim room's launchers, declared once: the multi-tensor Adam step (fused_adam.cu), called
// by fused_adam_cuda.cpp, and the multi-tensor norm and scale of clip_grad_norm_ (foreach_norm.cu,
// foreach_mul.cu), called by foreach_cuda.cpp. Every tensor is contiguous, of the launch's
// floating dtype, on the current device; multi_tensor.h (internal) splits a list into launches.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "anatomy/backends/cuda/common/scratch.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// _fused_adam_.

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

// _foreach_norm and _foreach_mul_.

// A contiguous tensor's elements.
struct DenseTensor {
  void* data;
  int64_t numel;
};

// out[i] = the ord-norm of tensors[i] (ord >= 0 or +-inf; 0 for an empty tensor unless ord is
// -inf, which the caller refuses), written in `dtype` to the `tensors.size()` elements at out.
// Two launch sequences: each block folds one chunk of one tensor into a partial result in the
// accumulation type (scratch), then one block per tensor folds its partials in a fixed order, so
// the same inputs give the same bits.
void launch_foreach_norm(DType dtype, const std::vector<DenseTensor>& tensors, double ord, void* out,
                         const ScratchFn& scratch, cudaStream_t stream);

// tensors[i] *= *scale for every tensor, in place, the scale one element of `dtype` on the device
// (read there: nothing waits for it) and the product formed in fp32 for fp16 and bf16, as mul_ by
// a 0-dim tensor computes it. Up to 32 tensors and 320 chunks per launch.
void launch_foreach_mul(DType dtype, const std::vector<DenseTensor>& tensors, const void* scale, cudaStream_t stream);

}  // namespace anatomy::cuda
