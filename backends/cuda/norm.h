// Launcher of the CUDA layer_norm and rms_norm kernels (norm.cu), called by norm_cuda.cpp with
// the plan's contiguous rows x cols input (core/norm_plan.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

enum class RowNormKind : int8_t { Layer, Rms };

// Every pointer is to `dtype` elements: input and out of rows x cols, weight and bias of cols
// (null when absent; rms_norm has no bias), mean and rstd of rows (layer_norm only).
struct RowNormBuffers {
  const void* input = nullptr;
  void* out = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  void* mean = nullptr;
  void* rstd = nullptr;
};

// Floating dtypes; fp16 and bf16 compute in fp32, fp32 in fp32, fp64 in fp64. rows and cols > 0.
void launch_row_norm(RowNormKind kind, DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols, double eps,
                     cudaStream_t stream);

}  // namespace anatomy::cuda
