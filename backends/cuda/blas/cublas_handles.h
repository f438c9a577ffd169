// Internal to blas/: included by the room's own files only (its launcher header is launch.h).
// cuBLAS and cuBLASLt handles for the matrix products: one of each per thread and device, made on
// first use, bound to the current stream and to a workspace cached per (device, stream). Handle
// creation costs milliseconds and a cudaMalloc, so nothing here is made per call; everything is
// released by an exit hook, before the CUDA runtime tears its context down.
//
//   cublasHandle_t h = cuda::cublas_handle();   // current device, current stream, its workspace
//   ANATOMY_CUBLAS_CHECK(cublasGemmEx(h, ...));
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstddef>

#include "anatomy/core/macros.h"

namespace anatomy::cuda {

// The calling thread's cuBLAS handle for the current device, set to current_stream() and that
// stream's workspace.
cublasHandle_t cublas_handle();
// The calling thread's cuBLASLt handle for the current device (Lt takes the stream and the
// workspace per call: blas_workspace()).
cublasLtHandle_t cublaslt_handle();

// The workspace of the current device's current stream: 32 MiB on Hopper and later, 4 MiB before
// (cuBLAS's recommendations), from the device's allocator, kept until exit. cuBLAS and cuBLASLt
// share it: calls on one stream run one after the other.
struct BlasWorkspace {
  void* data = nullptr;
  size_t bytes = 0;
};
BlasWorkspace blas_workspace();

namespace detail {
[[noreturn]] void throw_cublas_error(int status, const char* call, const char* file, int line);
}  // namespace detail

}  // namespace anatomy::cuda

// Every cuBLAS / cuBLASLt call goes through this: a failure becomes DeviceError naming the call
// and cuBLAS's message (CUBLAS_STATUS_ALLOC_FAILED becomes OutOfMemoryError).
#define ANATOMY_CUBLAS_CHECK(expr)                                                                           \
  do {                                                                                                       \
    const cublasStatus_t anatomy_cublas_status_ = (expr);                                                    \
    if (ANATOMY_UNLIKELY(anatomy_cublas_status_ != CUBLAS_STATUS_SUCCESS)) {                                 \
      ::anatomy::cuda::detail::throw_cublas_error(static_cast<int>(anatomy_cublas_status_), #expr, __FILE__, \
                                                  __LINE__);                                                 \
    }                                                                                                        \
  } while (0)
