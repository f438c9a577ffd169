// AsyncAllocator: a device's memory from CUDA's stream-ordered allocator (cudaMallocAsync and
// cudaFreeAsync on the device's default memory pool), the `backend:cudaMallocAsync` setting of
// ANATOMY_CUDA_ALLOC_CONF, as PyTorch's CUDAMallocAsyncAllocator. The driver's pool does the
// caching (its release threshold is raised to UINT64_MAX so freed memory stays in the pool); this
// wrapper tracks what it handed out, makes frees wait for the streams given to record_stream,
// trims the pool and retries once before an OutOfMemoryError, and reports the pool's reserved
// and used memory in the caching allocator's MemoryStats. Its memory history records allocations
// and frees as the caching allocator's does (no segment events: the pool's segments are not
// visible). docs/allocator.md "The cudaMallocAsync backend" says which stats are meaningful and
// what the native backend has that this one lacks.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "anatomy/alloc/alloc_conf.h"
#include "anatomy/alloc/memory_provider.h"
#include "anatomy/alloc/memory_stats.h"
#include "anatomy/core/allocator.h"

namespace anatomy::alloc {
struct MemorySnapshot;  // alloc/memory_snapshot.h
}  // namespace anatomy::alloc

namespace anatomy::cuda {

class AsyncAllocator final : public Allocator {
 public:
  // Over `device`'s default memory pool. With conf.caching false (ANATOMY_NO_CUDA_MEMORY_CACHING)
  // the pool's release threshold stays 0, so it gives free memory back at every synchronization.
  // Throws NotImplementedError where the device has no memory pools, DeviceError where no GPU is.
  explicit AsyncAllocator(int device, const alloc::AllocConf& conf = alloc::alloc_conf_from_env());
  // Frees nothing: blocks still allocated then are a caller's leak (as the caching allocator). Stops
  // recording the history.
  ~AsyncAllocator() override;
  AsyncAllocator(const AsyncAllocator&) = delete;
  AsyncAllocator& operator=(const AsyncAllocator&) = delete;

  // On the calling thread's current stream of the device. Throws OutOfMemoryError.
  DataPtr allocate(size_t nbytes) override;
  // Memory for `nbytes` bytes ordered on `stream` (a StreamId, cuda_memory_provider.h; nullptr
  // for 0 bytes); give it back with raw_free. Throws OutOfMemoryError.
  void* raw_alloc(size_t nbytes, alloc::StreamId stream);
  // cudaFreeAsync on the allocation stream, after that stream waits for the work queued so far on
  // every stream given to record_stream. Throws ValueError for a pointer it did not hand out.
  void raw_free(void* ptr);
  // `ptr` is also used by work queued on `stream`: its free waits for that work.
  void record_stream(void* ptr, alloc::StreamId stream);

  // Waits for the device, then trims the pool to what live allocations hold (cudaMemPoolTrimTo 0).
  void empty_cache();

  // Allocation counts and bytes (all, small up to 1 MiB, large) counted here; reserved bytes from
  // the pool's cudaMemPoolAttrReservedMemCurrent/High and active bytes from its
  // cudaMemPoolAttrUsedMemCurrent/High (All only); retries, OOMs, cudaMallocAsync and
  // cudaFreeAsync calls, synchronizations.
  alloc::MemoryStats stats() const;
  // Peaks back to the current values, the pool's high watermarks included.
  void reset_peak_stats();
  // stats() as memory_summary()'s table, titled with the device and the backend.
  std::string memory_summary() const;
  Device device() const;

  // As CachingAllocator::record_memory_history: records each allocation (alloc), each free as it
  // is asked for (free_requested) and once cudaFreeAsync is queued (free_completed: the pool
  // reuses the memory in stream order from there), and OOMs, with the operator the dispatcher is
  // running, in a ring of the last `max_entries` events; or stops, dropping them. Off by default.
  void record_memory_history(bool enabled, size_t max_entries = 100000);
  // The live allocations (`allocations`, in address order; `segments` stays empty), the recorded
  // events and stats() (include alloc/memory_snapshot.h).
  alloc::MemorySnapshot memory_snapshot() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace anatomy::cuda
