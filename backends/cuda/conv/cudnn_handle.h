// Internal to conv/: included by the room's own files only (its launcher header is launch.h).
// cuDNN handles: one per thread and device, made on first use (creation costs milliseconds),
// bound to the current stream on every call, destroyed by an exit hook before the CUDA runtime
// tears its context down. Built only where cuDNN was found (ANATOMY_WITH_CUDNN).
//
//   cudnnHandle_t h = cuda::cudnn_handle();   // current device, current stream
//   ANATOMY_CUDNN_CHECK(cudnnConvolutionForward(h, ...));
#pragma once

#include <cudnn.h>

#include "anatomy/core/macros.h"

namespace anatomy::cuda {

cudnnHandle_t cudnn_handle();

namespace detail {
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line);
}  // namespace detail

}  // namespace anatomy::cuda

// A failure becomes DeviceError naming the call and cuDNN's message (CUDNN_STATUS_ALLOC_FAILED:
// OutOfMemoryError).
#define ANATOMY_CUDNN_CHECK(expr)                                                                   \
  do {                                                                                              \
    const cudnnStatus_t anatomy_cudnn_status_ = (expr);                                             \
    if (ANATOMY_UNLIKELY(anatomy_cudnn_status_ != CUDNN_STATUS_SUCCESS)) {                          \
      ::anatomy::cuda::detail::throw_cudnn_error(anatomy_cudnn_status_, #expr, __FILE__, __LINE__); \
    }                                                                                               \
  } while (0)
