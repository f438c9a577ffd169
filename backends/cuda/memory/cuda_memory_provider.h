// CudaMemoryProvider: the caching allocator's MemoryProvider over the CUDA runtime, one per
// device. Memory comes from cudaMalloc and goes back with cudaFree, events are cudaEvents without
// timing, and a StreamId is the cudaStream_t's value (0 stands for the legacy default stream).
// Expandable segments use the driver's virtual memory management (driver_api.h): an address range
// from cuMemAddressReserve, and per page a cuMemCreate'd allocation mapped with cuMemMap and made
// readable and writable by the device with cuMemSetAccess.
// The current stream is the calling thread's current stream of the provider's device
// (current_stream.h).
#pragma once

#include <cuda_runtime_api.h>

#include "anatomy/alloc/memory_provider.h"

namespace anatomy::cuda {

alloc::StreamId stream_id(cudaStream_t stream);
cudaStream_t stream_of(alloc::StreamId id);

class CudaMemoryProvider final : public alloc::MemoryProvider {
 public:
  explicit CudaMemoryProvider(int device);

  Device device() const override { return device_; }
  void* reserve(size_t nbytes) override;
  void release(void* ptr, size_t nbytes) override;
  bool supports_virtual_memory() const override { return granularity_ > 0; }
  size_t page_size() const override { return granularity_; }
  void* reserve_address(size_t nbytes) override;
  void release_address(void* ptr, size_t nbytes) override;
  bool map(void* ptr, size_t nbytes) override;
  void unmap(void* ptr, size_t nbytes) override;
  alloc::EventId create_event() override;
  void record_event(alloc::EventId event, alloc::StreamId stream) override;
  bool query_event(alloc::EventId event) override;
  void destroy_event(alloc::EventId event) override;
  void synchronize() override;
  alloc::StreamId current_stream() const override;
  size_t total_memory() const override;
  size_t free_memory() const override;

 private:
  int index_;
  Device device_;
  size_t total_ = 0;
  // The minimum granularity of cuMemCreate on this device, or 0 when the driver or the device has
  // no virtual memory management.
  size_t granularity_ = 0;
};

}  // namespace anatomy::cuda
