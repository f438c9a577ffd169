// The softmax room's launcher: the CUDA softmax and log_softmax kernels (softmax.cu), called by softmax_cuda.cpp
// with the plan's contiguous [P, N, M] input and output (dispatch/ops/norm_plan.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// Floating dtypes; fp16 and bf16 compute in fp32.
void launch_softmax(bool log, DType dtype, const void* input, void* out, int64_t P, int64_t N, int64_t M,
                    cudaStream_t stream);

}  // namespace anatomy::cuda
