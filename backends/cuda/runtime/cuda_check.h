// ANATOMY_CUDA_CHECK and ANATOMY_CUDA_LAUNCH_CHECK: every CUDA runtime call and every kernel
// launch goes through one of them, so a failure becomes a typed anatomy error that names the
// call, CUDA's message and the place in the source.
//
//   ANATOMY_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, stream));
//   my_kernel<<<grid, block, 0, stream>>>(...);
//   ANATOMY_CUDA_LAUNCH_CHECK();
//
// cudaErrorMemoryAllocation throws OutOfMemoryError, every other error DeviceError. This header
// is included by .cu files, so it pulls in no fmt and nothing of core beyond macros.h: the
// message is built out of line in cuda_check.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include "anatomy/core/macros.h"

namespace anatomy::cuda::detail {

// Clears CUDA's last-error slot (so a later launch check does not report this error again) and
// throws OutOfMemoryError or DeviceError.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

}  // namespace anatomy::cuda::detail

#define ANATOMY_CUDA_CHECK(expr)                                                               \
  do {                                                                                         \
    const cudaError_t anatomy_cuda_err_ = (expr);                                              \
    if (ANATOMY_UNLIKELY(anatomy_cuda_err_ != cudaSuccess)) {                                  \
      ::anatomy::cuda::detail::throw_cuda_error(anatomy_cuda_err_, #expr, __FILE__, __LINE__); \
    }                                                                                          \
  } while (0)

// After a <<<...>>> launch: reports a bad configuration (too many threads, too much shared
// memory, no kernel image for this GPU) at the launch site rather than at some later call.
#define ANATOMY_CUDA_LAUNCH_CHECK() ANATOMY_CUDA_CHECK(cudaGetLastError())
