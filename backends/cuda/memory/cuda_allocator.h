// The CUDA device allocator: one caching allocator (alloc/caching_allocator.h, PyTorch's policy)
// per device over a CudaMemoryProvider, created on the device's first allocation and configured
// from ANATOMY_CUDA_ALLOC_CONF (or PYTORCH_CUDA_ALLOC_CONF). It is registered for
// DeviceType::CUDA when the library loads and touches CUDA only on the first allocation. At
// process exit the cached, unused segments go back to the driver (so leak checkers see only
// tensors that are still alive). Private pools (docs/allocator.md "Private pools") are the caching
// allocator's, forwarded per device below; alloc::MemPool(cuda::caching_allocator()) and
// alloc::UseMemPool (alloc/mem_pool.h) are their RAII handles.
//
// With backend:cudaMallocAsync in force at a device's first allocation, that device's memory comes
// from an AsyncAllocator (async_allocator.h) instead, for the life of the process. memory_stats,
// memory_allocated, memory_reserved, reset_peak_memory_stats, memory_summary, empty_cache and
// record_stream, record_memory_history and memory_snapshot work on both backends; what only the
// caching allocator has (caching_allocator(): its segments; private pools; expandable segments)
// throws NotImplementedError naming the backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/core/allocator.h"
#include "anatomy/cuda.h"

namespace anatomy::cuda {

class Stream;
class AsyncAllocator;

Allocator* cuda_allocator();

// The backend serving `device` (-1: the current device): the setting in force at its first
// allocation (its allocator is made now if it has none yet).
alloc::AllocBackend allocator_backend(int device = -1);

// The caching allocator of `device` (-1: the current device). Throws DeviceError where no GPU is,
// NotImplementedError where the device uses backend:cudaMallocAsync.
alloc::CachingAllocator& caching_allocator(int device = -1);
// The stream-ordered allocator of `device` (-1: the current device). Throws NotImplementedError
// where the device uses backend:native.
AsyncAllocator& async_allocator(int device = -1);

// Memory for `nbytes` bytes used on `stream` (a StreamId) from `device`'s allocator, either
// backend (nullptr for 0 bytes); give it back with raw_free. Throws OutOfMemoryError.
void* raw_alloc(size_t nbytes, alloc::StreamId stream, int device);
void raw_free(void* ptr, int device);

// `ptr`, the start of an allocation of `device`'s allocator, is also used by work queued on
// `stream` (a StreamId, cuda_memory_provider.h): its free waits for that work. Either backend.
void record_stream_use(void* ptr, alloc::StreamId stream, int device);

// memory_stats, memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved,
// reset_peak_memory_stats, memory_summary, empty_cache, record_memory_history and memory_snapshot
// are declared in <anatomy/cuda.h> and implemented in cuda_allocator.cpp, over either backend:
// the caching allocator's history and snapshot, or AsyncAllocator's (allocations and frees, no
// segment events; its live allocations instead of segments).

// Private pools of `device`'s allocator (-1: the current device), as PyTorch's MemPool calls
// (createOrIncrefPool, beginAllocateToPool, endAllocateToPool, releasePool). A filter sees the
// allocation's stream as a StreamId (stream_id(cudaStream_t), cuda_memory_provider.h).
alloc::PoolId create_pool(int device = -1);
void retain_pool(alloc::PoolId pool, int device = -1);
void release_pool(alloc::PoolId pool, int device = -1);
void begin_allocate_to_pool(alloc::PoolId pool, alloc::StreamFilter filter, int device = -1);
// The calling thread's allocations on `stream` go to `pool` of the stream's device.
void begin_allocate_current_thread_to_pool(alloc::PoolId pool, const Stream& stream);
// The calling thread's allocations on every stream of `device` go to `pool` (as use_mem_pool).
void begin_allocate_current_thread_to_pool(alloc::PoolId pool, int device = -1);
void end_allocate_to_pool(alloc::PoolId pool, int device = -1);
alloc::PoolStats pool_stats(alloc::PoolId pool, int device = -1);

}  // namespace anatomy::cuda
