// The caching allocator's state and the parts that work on it (internal to alloc/: only the
// allocator's own files include it). CachingAllocator (caching_allocator.cpp) is the locked front:
// each public method takes `mutex` and calls into the parts below, which assume it is held.
//
//   caching_block.h          Block, BlockPool (a free set ordered for best fit), Expandable
//   caching_block_pool.h     the hot path, inline: size rounding, best-fit search, split, merge,
//                            frees deferred by record_stream's events, spare Blocks and nodes
//   caching_block_pool.cpp   the size classes (round_size, allocation_size) and the conf checks
//   caching_segments.cpp     segments: reserving (with the lock dropped around the provider
//                            when asked), the out-of-memory ladder, garbage collection, releasing
//                            cached segments, the OutOfMemoryError message
//   caching_expandable.cpp   expandable segments: growing, mapping holes, shrinking, unmapping
//   caching_private_pools.cpp  private pools' block pools: retiring a pool without users
//   caching_segment_list.cpp the segments and their blocks, for segments() and snapshots
//
// docs/allocator.md ("The code") says the same with the policy each part follows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "anatomy/alloc/allocator_mutex.h"
#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/caching_block.h"
#include "anatomy/alloc/expandable_segment.h"
#include "anatomy/alloc/memory_history.h"
#include "anatomy/alloc/private_pool.h"
#include "anatomy/core/macros.h"
#include "anatomy/core/pointer_map.h"

namespace anatomy::alloc {

// Larger requests are out of memory at once: rounding them would overflow, and no device holds
// 2^62 bytes anyway.
inline constexpr size_t kMaxRequest = size_t{1} << 62;

// The constructor's and set_conf's checks (caching_block_pool.cpp).
void check_conf(const AllocConf& conf, const MemoryProvider& provider);

// A private pool's own block pools; private_pool.h keeps its id, users and counters.
struct PrivatePool final : PoolState {
  BlockPool small, large;
  // Requests for it past the cache, which may drop the allocator's lock (Note [Reserving without
  // the lock]): the pool stays until they are done, even when its last user goes meanwhile.
  int requests_in_flight = 0;
  explicit PrivatePool(CachingAllocator::Impl* owner)
      : small{{}, true, owner, 0, this}, large{{}, false, owner, 0, this} {}
};

struct CachingAllocator::Impl {
  MemoryProvider& provider;
  const Device device;  // the provider's, asked once: every DataPtr carries it
  AllocConf conf;
  // No roundup_power2_divisions set: round_size is a 512-byte round up, done inline.
  bool plain_rounding = true;
  mutable AllocatorMutex mutex;
  BlockPool small{{}, true, this}, large{{}, false, this};
  // Allocated blocks by pointer, for raw_free and record_stream (a DataPtr carries its Block).
  // The active blocks (docs/allocator.md) are these, those in outstanding_events and those in
  // blocks_awaiting_events.
  PointerMap<Block*> allocated_blocks;
  std::map<StreamId, std::deque<std::pair<EventId, Block*>>> outstanding_events;
  // Note [Allocating while a graph captures]
  // A route to a private pool is in force while a CUDA graph captures, and a capture forbids
  // querying or recording events outside it (CUDA would invalidate the capture). So while any
  // route is in force, as PyTorch's allocator while captures are underway: malloc processes no
  // events, a freed block that other streams used waits here with its stream uses instead of
  // getting events (insert_events runs for it when the last route ends), and a request past the
  // cache skips the out-of-memory ladder's last rung, which synchronizes the device (the rungs
  // that release wholly free cached segments stay, as in PyTorch; the CUDA provider releases with
  // the capturing thread's mode relaxed).
  std::vector<Block*> blocks_awaiting_events;
  MemoryStats stats;
  size_t total_reserved = 0;
  // The most ever reserved at once; reset_peak_stats leaves it (Note [Releasing before a new peak]).
  size_t reserved_high_water = 0;
  // Segments made so far: the next one's number (Note [Free blocks in segment order]).
  uint64_t segments_made = 0;
  uint64_t next_segment() { return ++segments_made; }
  // release_lock_on_cudamalloc: bytes being reserved by threads that dropped the lock for it, and
  // how many such reservations began (Note [Reserving without the lock]).
  size_t reserving = 0;
  uint64_t unlocked_reserves = 0;
  MemoryHistory history;
  // expandable_segments: at most one growing segment per pool and stream.
  std::map<std::pair<const BlockPool*, StreamId>, std::unique_ptr<Expandable>> expandable_segments;
  PrivatePools private_pools;

  // A cached allocate + free pair splits a block and merges it back: the Block objects and the
  // free sets' nodes that this makes and drops are kept for the next pair rather than going
  // back to the heap (at most kMaxSpare of each).
  static constexpr size_t kMaxSpare = 1024;
  std::vector<Block*> spare_blocks;              // free Blocks, reset when used again
  std::vector<BlockSet::node_type> spare_nodes;  // empty nodes of the free sets

  Impl(MemoryProvider& p, const AllocConf& c) : provider(p), device(p.device()) { set_conf(c); }
  ~Impl() {
    for (Block* b : spare_blocks) delete b;
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // ---- common to the parts ----

  void set_conf(const AllocConf& c);

  // Every active block: allocated, or freed and waiting for events (once per event).
  template <typename F>
  void for_each_active(F&& f) const {
    allocated_blocks.for_each([&](const void*, Block* b) { f(b); });
    for (const auto& [stream, queue] : outstanding_events) {
      for (const auto& entry : queue) f(entry.second);
    }
    for (Block* b : blocks_awaiting_events) f(b);
  }

  void trace(TraceAction action, const void* address, size_t size, StreamId stream) {
    if (ANATOMY_UNLIKELY(history.enabled())) history.record(action, address, size, stream);
  }

  template <typename F>
  void for_stat(const BlockPool& pool, F&& f) {
    f(StatType::All);
    f(pool.is_small ? StatType::Small : StatType::Large);
  }

  // ---- the block pool (caching_block_pool.h, inline: the hot path) ----

  // A cached block for a request. One that will be split stays in its pool's free set when its
  // remainder (the same Block, shrunk from the front) still sorts after the block before it:
  // alloc_found_block then shrinks it in place, saving an erase and an insert.
  struct FoundBlock {
    Block* block = nullptr;
    bool in_free_set = false;
  };

  size_t rounded_size(size_t size) const;
  Block* new_block(StreamId stream, size_t size, BlockPool* pool, char* ptr);
  void delete_block(Block* block);
  Block* malloc(size_t orig_size, StreamId stream);
  BlockPool& pool_for(size_t size, StreamId stream);
  FoundBlock get_free_block(BlockPool& pool, size_t size, StreamId stream);
  bool should_split(const Block* block, size_t size) const;
  Block* alloc_found_block(Block* block, size_t orig_size, size_t size, bool in_free_set = false);
  void free(Block* block);
  void free_unlisted(Block* block);
  void free_block(Block* block);
  Block* merge_free_run(Block* block, Block* before, Block* after, BlockPool& pool);
  void process_events();
  void insert_events(Block* block);
  // Records the events of blocks_awaiting_events once no route is in force.
  void insert_deferred_events();
  void finish_event(std::pair<EventId, Block*> entry);
  void insert_into_blocks(Block* block);
  void insert_keeping_age(Block* block);
  void erase_from_blocks(BlockPool& pool, Block* block);
  void keep_node(BlockSet::node_type node);

  // ---- segments (caching_segments.cpp) ----

  ANATOMY_NOINLINE Block* malloc_past_cache(size_t orig_size, size_t size, BlockPool& pool, StreamId stream);
  Block* alloc_block(BlockPool& pool, size_t alloc_size, StreamId stream, bool is_retry);
  void* reserve_segment(size_t nbytes);
  FoundBlock alloc_block_or_cached(BlockPool& pool, size_t size, size_t alloc_size, StreamId stream, bool is_retry);
  double allowed_memory() const;
  bool exceeds_memory_fraction(size_t nbytes) const;
  void synchronize_and_free_events();
  void garbage_collect_cached_blocks();
  void release_block(Block* block);
  bool release_available_cached_blocks(BlockPool& pool, size_t size, StreamId stream);
  void release_cached_segments_before_new_peak(const BlockPool& pool, size_t alloc_size);
  void add_reserved(size_t nbytes);
  void release_blocks(BlockPool& pool);
  void release_cached_blocks();
  [[noreturn]] void throw_oom(size_t orig_size, size_t size, size_t alloc_size, StreamId stream, const BlockPool& pool);
  [[noreturn]] ANATOMY_NOINLINE void throw_too_large(size_t orig_size, StreamId stream);

  // ---- expandable segments (caching_expandable.cpp) ----

  // Caching off means every request is a reservation of its own, whatever the knob says.
  bool use_expandable_segments() const { return conf.expandable_segments && conf.caching; }
  // Private pools keep plain segments (as PyTorch's do): a pool's segments change owner when the
  // pool dies, which a growing segment tied to its pool and stream cannot.
  bool expandable_for(const BlockPool& pool) const { return use_expandable_segments() && !pool.private_pool; }
  size_t expandable_page_size(const BlockPool& pool) const;
  Block* grow_expandable_segment(BlockPool& pool, size_t size, StreamId stream);
  Block* map_holes(Expandable& es, size_t size);
  // Runs a grow or shrink of `seg`, counting the provider's map and unmap calls it made.
  template <typename F>
  size_t counted(ExpandableSegment& seg, F&& f) {
    const int64_t maps = seg.maps(), unmaps = seg.unmaps();
    const size_t bytes = f();
    stats.num_provider_maps += seg.maps() - maps;
    stats.num_provider_unmaps += seg.unmaps() - unmaps;
    return bytes;
  }
  void shrink_expandable_segments();
  void shrink_expandable_segment(Expandable* es);
  void unmap_inner_free_pages(Expandable& es);
  void unmap_free_block(Expandable& es, Block* block);

  // ---- private pools (caching_private_pools.cpp) ----

  void retire_pool(PrivatePool& pp);
  void drop_use(PoolState& state);

  // Keeps a private pool in existence while a request for it is past the cache (Note
  // [Reserving without the lock]); the ordinary pools need nothing. When the pool's last user
  // went meanwhile, it retires at the end as it would have then.
  class PoolInFlight {
   public:
    PoolInFlight(Impl& impl, BlockPool& pool) : impl_(impl), pp_(pool.private_pool) {
      if (pp_) ++pp_->requests_in_flight;
    }
    ~PoolInFlight() {
      if (pp_ && --pp_->requests_in_flight == 0 && pp_->stats.use_count == 0) impl_.retire_pool(*pp_);
    }
    PoolInFlight(const PoolInFlight&) = delete;
    PoolInFlight& operator=(const PoolInFlight&) = delete;

   private:
    Impl& impl_;
    PrivatePool* pp_;
  };

  // ---- the segment list (caching_segment_list.cpp) ----

  std::vector<SegmentInfo> segments() const;
};

}  // namespace anatomy::alloc
