// CachingAllocator: PyTorch's caching device allocator, written against a MemoryProvider so the
// same policy runs on the simulated device in tests and over CUDA. docs/allocator.md explains the
// policy (rounding, small and large pools, best fit per stream, splitting and merging, deferred
// frees after record_stream, the out-of-memory ladder) and every knob.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "anatomy/alloc/alloc_conf.h"
#include "anatomy/alloc/memory_provider.h"
#include "anatomy/alloc/memory_stats.h"
#include "anatomy/alloc/private_pool.h"
#include "anatomy/core/allocator.h"

namespace anatomy::alloc {

inline constexpr size_t kMinBlockSize = 512;        // every size is a multiple of this
inline constexpr size_t kSmallSize = 1 * kMB;       // requests up to this go to the small pool
inline constexpr size_t kSmallBuffer = 2 * kMB;     // small-pool segment size
inline constexpr size_t kLargeBuffer = 20 * kMB;    // large-pool segment size for requests...
inline constexpr size_t kMinLargeAlloc = 10 * kMB;  // ...under this; above, round to...
inline constexpr size_t kRoundLarge = 2 * kMB;      // ...this

// The block size a request of `size` bytes gets: 512-byte multiples, or the next of
// roundup_power2_divisions steps between two powers of two when that knob is set.
size_t round_size(size_t size, const AllocConf& conf);
// The segment size reserved from the provider when no cached block fits a rounded `size`.
size_t allocation_size(size_t size);

// One block of a segment, as segments() reports it.
struct BlockInfo {
  void* ptr;
  size_t size;
  size_t requested;  // what the caller asked for (0 when free)
  bool allocated;
  bool pending_free;         // freed, waiting for events of streams that used it (record_stream)
  const char* op = nullptr;  // the operator that allocated it, while the history records
  // Pages of an expandable segment given back to the device (empty_cache): not memory, only
  // addresses, mapped again before any of it is handed out. Neither allocated nor free.
  bool unmapped = false;
};
struct SegmentInfo {
  void* address;
  size_t size;  // mapped bytes: the blocks' sizes but for unmapped ones
  StreamId stream;
  bool is_small;
  std::vector<BlockInfo> blocks;  // in address order, tiling the segment
  // An expandable segment (expandable_segments:True): `size` is what is mapped, in a part of a
  // larger reserved range that grows and shrinks, and may hold unmapped blocks.
  bool is_expandable = false;
  PoolId pool{};  // the private pool it belongs to (default: the ordinary pools)
  // Bytes of its unmapped blocks: the blocks tile [address, address + size + unmapped_size).
  size_t unmapped_size = 0;
};

struct MemorySnapshot;  // memory_snapshot.h

class CachingAllocator final : public Allocator {
 public:
  // `provider` must outlive the allocator. Throws NotImplementedError for settings this
  // increment does not support (backend:cudaMallocAsync), and for expandable_segments:True when
  // the provider has no virtual memory.
  explicit CachingAllocator(MemoryProvider& provider, const AllocConf& conf = alloc_conf_from_env());
  // Synchronizes and releases the cache. Blocks still allocated then are a caller's leak: their
  // segments stay with the provider.
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // On the provider's current stream. Throws OutOfMemoryError.
  DataPtr allocate(size_t nbytes) override;
  // Memory for `nbytes` bytes used on `stream` (nullptr for 0 bytes); give it back with raw_free.
  void* raw_alloc(size_t nbytes, StreamId stream);
  void raw_free(void* ptr);
  // `ptr` is also used by work queued on `stream`: its free waits until that work is done.
  void record_stream(void* ptr, StreamId stream);

  // Waits for the device, then gives every cached segment with no block in use back.
  void empty_cache();

  MemoryStats stats() const;
  void reset_peak_stats();
  std::vector<SegmentInfo> segments() const;
  // stats() as a table for people, like torch.cuda.memory_summary() (alloc/memory_summary.h).
  std::string memory_summary() const;
  Device device() const;

  // Records allocations, frees, segment reservations and releases and OOMs, with the operator
  // the dispatcher is running, in a ring of the last `max_entries` events (memory_history.h), or
  // stops (dropping them). Off by default, and then costs a branch per event.
  void record_memory_history(bool enabled, size_t max_entries = 100000);
  // The segments, their blocks and the recorded events (include memory_snapshot.h).
  MemorySnapshot memory_snapshot() const;

  AllocConf conf() const;
  void set_conf(const AllocConf& conf);  // same checks as the constructor

  // Private pools (docs/allocator.md "Private pools"; mem_pool.h has RAII handles). A private
  // pool's segments serve only allocations routed to it, and its freed blocks stay in it. It lives
  // while it has users (create_pool's caller, each retain_pool, a route in force) or holds an
  // active block; after that its segments become ordinary cached ones. Calls naming a pool that
  // does not exist or has no users throw ValueError and change nothing.
  //
  // A new pool, with one user: the caller.
  PoolId create_pool();
  // One more user of `pool` (sharing it: both allocate from the same segments).
  void retain_pool(PoolId pool);
  // One user of `pool` fewer.
  void release_pool(PoolId pool);
  // From now on, allocations whose stream `filter` accepts go to `pool` (the first route that
  // accepts wins); the route is a user of the pool until end_allocate_to_pool. One route per pool.
  void begin_allocate_to_pool(PoolId pool, StreamFilter filter);
  void end_allocate_to_pool(PoolId pool);
  // The counters of `pool` while it exists (users or not); every existing pool.
  PoolStats pool_stats(PoolId pool) const;
  std::vector<PoolStats> pools() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace anatomy::alloc
