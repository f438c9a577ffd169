// cudaMalloc/cudaFree behind the Allocator interface (see cuda_allocator.h).
#include "anatomy/backends/cuda/cuda_allocator.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>

#include "anatomy/backends/cuda/cuda_check.h"
#include "anatomy/backends/cuda/device.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace {

// cudaMalloc returns blocks aligned to at least 256 bytes, so the low byte of the pointer is
// free: the DataPtr's context carries the device index there, and the deleter needs nothing
// else (no per-block bookkeeping in this tiny allocator). Device indices are below 128.
constexpr uintptr_t kDeviceBits = 0xff;

void* pack(void* ptr, int device) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(ptr) | static_cast<uintptr_t>(device));
}

// Runs in DataPtr's destructor, so it must not throw: errors are reported on stderr.
void free_cuda(void* ctx) {
  auto bits = reinterpret_cast<uintptr_t>(ctx);
  int device = static_cast<int>(bits & kDeviceBits);
  void* ptr = reinterpret_cast<void*>(bits & ~kDeviceBits);
  // Free with the owning device current, as cudaFree's implicit synchronization is per device.
  int previous = -1;
  bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != device && cudaSetDevice(device) == cudaSuccess;
  cudaError_t err = cudaFree(ptr);
  if (switched) (void)cudaSetDevice(previous);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    // At process exit the runtime may already be gone, and the memory with it.
    if (err != cudaErrorCudartUnloading && err != cudaErrorContextIsDestroyed) {
      std::fprintf(stderr, "anatomy: warning: cudaFree(%p) on cuda:%d failed: %s\n", ptr, device,
                   cudaGetErrorString(err));
    }
  }
}

class CudaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    int device = current_device();
    Device where(DeviceType::CUDA, static_cast<Device::Index>(device));
    if (nbytes == 0) return DataPtr(nullptr, where);
    void* ptr = nullptr;
    cudaError_t err = cudaMalloc(&ptr, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      size_t free_bytes = 0, total_bytes = 0;
      ANATOMY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      ANATOMY_THROW(OutOfMemoryError,
                    "cuda allocator: out of memory allocating {} bytes on cuda:{} ({} of {} bytes free)", nbytes,
                    device, free_bytes, total_bytes);
    }
    if (err != cudaSuccess) detail::throw_cuda_error(err, "cudaMalloc", __FILE__, __LINE__);
    ANATOMY_INTERNAL_ASSERT((reinterpret_cast<uintptr_t>(ptr) & kDeviceBits) == 0, "cudaMalloc returned {}", ptr);
    return DataPtr(ptr, pack(ptr, device), &free_cuda, where);
  }
};

const bool registered = [] {
  set_allocator(DeviceType::CUDA, cuda_allocator());
  return true;
}();

}  // namespace

Allocator* cuda_allocator() {
  static CudaAllocator allocator;
  return &allocator;
}

}  // namespace anatomy::cuda
