// CudaMemoryProvider (see cuda_memory_provider.h). Each call makes the provider's device current
// for its duration, since the caching allocator may call from a thread whose current device is
// another one (a tensor freed there).
#include "anatomy/backends/cuda/cuda_memory_provider.h"

#include <cstdint>

#include "anatomy/backends/cuda/cuda_check.h"
#include "anatomy/backends/cuda/current_stream.h"
#include "anatomy/backends/cuda/device.h"

namespace anatomy::cuda {

alloc::StreamId stream_id(cudaStream_t stream) {
  return stream == cudaStreamLegacy || stream == nullptr
             ? 0
             : static_cast<alloc::StreamId>(reinterpret_cast<intptr_t>(stream));
}

cudaStream_t stream_of(alloc::StreamId id) {
  return id == 0 ? cudaStreamLegacy : reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(id));
}

CudaMemoryProvider::CudaMemoryProvider(int device)
    : index_(device), device_(DeviceType::CUDA, static_cast<Device::Index>(device)) {
  DeviceGuard guard(index_);
  size_t free_bytes = 0;
  ANATOMY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_));
}

void* CudaMemoryProvider::reserve(size_t nbytes) {
  DeviceGuard guard(index_);
  void* ptr = nullptr;
  const cudaError_t err = cudaMalloc(&ptr, nbytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clear it: the allocator frees cache and retries
    return nullptr;
  }
  if (err != cudaSuccess) detail::throw_cuda_error(err, "cudaMalloc", __FILE__, __LINE__);
  return ptr;
}

void CudaMemoryProvider::release(void* ptr, size_t /*nbytes*/) {
  DeviceGuard guard(index_);
  ANATOMY_CUDA_CHECK(cudaFree(ptr));
}

alloc::EventId CudaMemoryProvider::create_event() {
  DeviceGuard guard(index_);
  cudaEvent_t event = nullptr;
  ANATOMY_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return static_cast<alloc::EventId>(reinterpret_cast<uintptr_t>(event));
}

void CudaMemoryProvider::record_event(alloc::EventId event, alloc::StreamId stream) {
  DeviceGuard guard(index_);
  ANATOMY_CUDA_CHECK(cudaEventRecord(reinterpret_cast<cudaEvent_t>(static_cast<uintptr_t>(event)), stream_of(stream)));
}

bool CudaMemoryProvider::query_event(alloc::EventId event) {
  const cudaError_t err = cudaEventQuery(reinterpret_cast<cudaEvent_t>(static_cast<uintptr_t>(event)));
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  if (err != cudaSuccess) detail::throw_cuda_error(err, "cudaEventQuery", __FILE__, __LINE__);
  return true;
}

void CudaMemoryProvider::destroy_event(alloc::EventId event) {
  DeviceGuard guard(index_);
  ANATOMY_CUDA_CHECK(cudaEventDestroy(reinterpret_cast<cudaEvent_t>(static_cast<uintptr_t>(event))));
}

void CudaMemoryProvider::synchronize() {
  DeviceGuard guard(index_);
  ANATOMY_CUDA_CHECK(cudaDeviceSynchronize());
}

// The calling thread's current stream of this provider's device (a thread-local read): a block
// belongs to the stream that allocates it.
alloc::StreamId CudaMemoryProvider::current_stream() const { return stream_id(cuda::current_stream(index_).handle()); }

size_t CudaMemoryProvider::total_memory() const { return total_; }

size_t CudaMemoryProvider::free_memory() const {
  DeviceGuard guard(index_);
  size_t free_bytes = 0, total_bytes = 0;
  ANATOMY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

}  // namespace anatomy::cuda
