// CudaMemoryProvider: the caching allocator's MemoryProvider over the CUDA runtime, one per
// device. Memory comes from cudaMalloc and goes back with cudaFree, events are cudaEvents without
// timing, and a StreamId is the cudaStream_t's value (0 stands for the legacy default stream).
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
};

}  // namespace anatomy::cuda
