// The out-of-line half of ANATOMY_CUDA_CHECK: formats the message and throws.
#include "anatomy/backends/cuda/runtime/cuda_check.h"

#include "anatomy/core/error.h"

namespace anatomy::cuda::detail {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  // Non-sticky errors stay in the last-error slot; clear it so the next launch check does not
  // blame its own kernel for this call's failure.
  (void)cudaGetLastError();
  std::string msg = fmt::format("CUDA error: {} ({}: {}) in {} at {}:{}", cudaGetErrorString(err),
                                cudaGetErrorName(err), static_cast<int>(err), call, file, line);
  if (err == cudaErrorMemoryAllocation) throw OutOfMemoryError(msg);
  throw DeviceError(msg);
}

}  // namespace anatomy::cuda::detail
