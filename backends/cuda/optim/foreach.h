// Launchers of the multi-tensor norm and scale (foreach_norm.cu, foreach_mul.cu), called by
// foreach_cuda.cpp. Every tensor is contiguous, of the launch's floating dtype, on the current
// device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "anatomy/backends/cuda/common/scratch.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

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
