// Launchers of the arange and linspace kernels (range.cu), called by range_cuda.cpp. Each value is
// computed on the device exactly as the CPU kernel (backends/cpu/range_cpu.cpp) computes it: int64
// arithmetic for integral ranges, double for floating ones, rounded once to the element type.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// out[i] = start + i * step in int64, converted to `dtype`.
void launch_arange_integral(DType dtype, void* out, int64_t n, int64_t start, int64_t step, cudaStream_t stream);
// out[i] = start + i * step in double, converted to `dtype`.
void launch_arange_floating(DType dtype, void* out, int64_t n, double start, double step, cudaStream_t stream);
// linspace's symmetric form: the first half counts up from `start`, the rest down from `end`.
void launch_linspace(DType dtype, void* out, int64_t steps, double start, double end, double step,
                     cudaStream_t stream);

}  // namespace anatomy::cuda
