// CachingAllocator, the locked front of the caching allocator (docs/allocator.md "The code"): the
// allocator's lock, its counters and history (Ledger), the allocated blocks, the frees waiting
// for other streams (StreamEvents), the routing of each request to a block pool, and the
// out-of-memory ladder. It composes the parts, each with its state of its own:
//
//   BlockPool          caching_block_pool.h     a free set: best fit, split, merge (inline)
//   Segments           caching_segments.h       memory from the provider: reserve, release, OOM
//   ExpandableSegments caching_expandable.h     growing and shrinking segments (owned by Segments)
//   PrivatePoolSet     caching_private_pools.h  private pools: their block pools, users, routes
//   StreamEvents       caching_stream_events.h  record_stream's events (inline)
//   SegmentList        caching_segment_list.h   segments() and snapshots
//
// Each public method takes the lock and calls into the parts, which assume it is held. The policy
// follows PyTorch's CUDACachingAllocator, step by step, so the two read side by side: its
// get_free_block is BlockPool::best_fit, alloc_found_block is hand_out over BlockPool::take,
// free_block is free_block over BlockPool::give_back, alloc_block is Segments::reserve,
// release_available_cached_blocks is Segments::release_oversize, and release_cached_blocks and
// malloc's ladder keep their names (malloc_past_cache here). Beside the parts: Block and Expandable
// (caching_block.h), the records all parts share; SpareBlocks (caching_block_pool.h), the kept
// Blocks and free-set nodes; Reservations (caching_reservations.h), Segments' reserved bytes.
//
// The cached allocate + free pair runs through this file, the inline block pool and the inline
// events alone, so the compiler sees all of it at once; every other part is out of line: a
// request past the cache costs a reservation, far more than a call.
#include "anatomy/alloc/caching_allocator.h"

#include <algorithm>
#include <mutex>
#include <unordered_set>
#include <utility>

#include "anatomy/alloc/allocator_mutex.h"
#include "anatomy/alloc/caching_block.h"
#include "anatomy/alloc/caching_block_pool.h"
#include "anatomy/alloc/caching_ledger.h"
#include "anatomy/alloc/caching_private_pools.h"
#include "anatomy/alloc/caching_segment_list.h"
#include "anatomy/alloc/caching_segments.h"
#include "anatomy/alloc/caching_stream_events.h"
#include "anatomy/alloc/memory_snapshot.h"
#include "anatomy/core/error.h"
#include "anatomy/core/macros.h"
#include "anatomy/core/op_name_hook.h"
#include "anatomy/core/pointer_map.h"

namespace anatomy::alloc {

namespace {

// The constructor's and set_conf's checks.
void check_conf(const AllocConf& conf, const MemoryProvider& provider) {
  ANATOMY_CHECK(!conf.expandable_segments || provider.supports_virtual_memory(), NotImplementedError,
                "caching allocator: expandable_segments:True is not supported by the memory provider of {} "
                "(it has no virtual memory management); use expandable_segments:False",
                provider.device().str());
  ANATOMY_CHECK(
      conf.backend == AllocBackend::Native, NotImplementedError,
      "caching allocator: backend:cudaMallocAsync is not a policy of this allocator (it is the native "
      "backend); CUDA devices serve that setting with cuda::AsyncAllocator (backends/cuda/memory/async_allocator.h)");
}

}  // namespace

struct CachingAllocator::Impl {
  MemoryProvider& provider;
  const Device device;  // the provider's, asked once: every DataPtr carries it
  AllocConf conf;
  // No roundup_power2_divisions set: round_size is a 512-byte round up, done inline.
  bool plain_rounding = true;
  mutable AllocatorMutex mutex;
  Ledger ledger;
  SpareBlocks spares;
  BlockPool small{true, spares, this}, large{false, spares, this};
  // Allocated blocks by pointer, for raw_free and record_stream (a DataPtr carries its Block).
  // The active blocks (docs/allocator.md) are these and those waiting in `events`.
  PointerMap<Block*> allocated_blocks;
  StreamEvents events{provider};
  Segments segments{provider, conf, mutex, ledger, spares};
  PrivatePoolSet private_pools{small, large, spares, this};

  Impl(MemoryProvider& p, const AllocConf& c) : provider(p), device(p.device()) { set_conf(c); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void set_conf(const AllocConf& c) {
    conf = c;
    plain_rounding = std::all_of(c.roundup_power2_divisions.begin(), c.roundup_power2_divisions.end(),
                                 [](size_t d) { return d <= 1; });
  }

  // Every active block: allocated, or freed and waiting for events (once per event).
  template <typename F>
  void for_each_active(F&& f) const {
    allocated_blocks.for_each([&](const void*, Block* b) { f(b); });
    events.for_each_waiting(f);
  }

  // ---- allocation: route, best fit, split ----

  size_t rounded_size(size_t size) const {
    if (!plain_rounding) return round_size(size, conf);
    return size < kMinBlockSize ? kMinBlockSize : (size + kMinBlockSize - 1) & ~(kMinBlockSize - 1);
  }

  // The first route that takes the request sends it to its private pool's small or large pool;
  // with no route in force this costs one branch.
  BlockPool& pool_for(size_t size, StreamId stream) {
    if (ANATOMY_UNLIKELY(private_pools.routing())) {
      if (BlockPool* routed = private_pools.route(size, stream)) return *routed;
    }
    return size <= kSmallSize ? small : large;
  }

  // A cached block when one fits; otherwise malloc_past_cache reserves.
  Block* malloc(size_t orig_size, StreamId stream) {
    if (orig_size > kMaxRequest) segments.throw_too_large(orig_size, stream);
    // Note [Allocating while a graph captures]: no event is queried while a route is in force.
    if (ANATOMY_LIKELY(!private_pools.routing())) process_events();
    size_t size = rounded_size(orig_size);
    BlockPool& pool = pool_for(size, stream);
    FoundBlock found = conf.caching ? pool.best_fit(size, stream, conf) : FoundBlock{};
    if (found.block) return hand_out(pool, found, orig_size, size);
    return malloc_past_cache(orig_size, size, pool, stream);
  }

  // The block of `size` bytes `pool` takes from `found`, allocated and counted.
  Block* hand_out(BlockPool& pool, FoundBlock found, size_t orig_size, size_t size) {
    SplitChange change;
    Block* block = pool.take(found, size, conf, change);
    block->allocated = true;
    block->requested = orig_size;
    block->op = nullptr;
    if (ANATOMY_UNLIKELY(ledger.history.enabled())) {
      ledger.history.record(TraceAction::Alloc, block->ptr, orig_size, block->stream);
      block->op = op_name_hook::current();
    }
    allocated_blocks.insert(block->ptr, block);
    MemoryStats& stats = ledger.stats;
    Ledger::for_stat(pool.is_small(), [&](StatType t) {
      Ledger::add(stats.inactive_split[t], change.blocks);
      Ledger::add(stats.inactive_split_bytes[t], change.bytes);
      stats.allocation[t].increase(1);
      stats.allocated_bytes[t].increase(static_cast<int64_t>(block->size));
      stats.active[t].increase(1);
      stats.active_bytes[t].increase(static_cast<int64_t>(block->size));
      stats.requested_bytes[t].increase(static_cast<int64_t>(orig_size));
    });
    if (PrivatePool* pp = pool.private_pool()) pp->count_allocated(block->size);
    return block;
  }

  // ---- freeing: merge, or wait for the events of record_stream ----

  void free(Block* block) {
    allocated_blocks.erase(block->ptr);
    free_unlisted(block);
  }

  // free() of a block already taken out of allocated_blocks (raw_free looks it up and takes it
  // out in one probe).
  void free_unlisted(Block* block) {
    block->allocated = false;
    ledger.trace(TraceAction::FreeRequested, block->ptr, block->requested, block->stream);
    MemoryStats& stats = ledger.stats;
    Ledger::for_stat(block->pool->is_small(), [&](StatType t) {
      stats.allocation[t].decrease(1);
      stats.allocated_bytes[t].decrease(static_cast<int64_t>(block->size));
      stats.requested_bytes[t].decrease(static_cast<int64_t>(block->requested));
    });
    if (PrivatePool* pp = block->pool->private_pool()) pp->count_freed(block->size);
    if (block->stream_uses.empty()) {
      free_block(block);
      return;
    }
    // Other streams may still be using it: its reuse waits for their events (Note [Allocating
    // while a graph captures]: while a route is in force, without events until it ends).
    if (ANATOMY_UNLIKELY(private_pools.routing())) {
      events.defer(block);
      return;
    }
    events.record(block);
  }

  // Returns the block to its pool, merged with free neighbours (`block` may be deleted then).
  void free_block(Block* block) {
    BlockPool& pool = *block->pool;
    // The request stays known while the free waits for events, for the trace and the snapshot.
    ledger.trace(TraceAction::FreeCompleted, block->ptr, block->requested, block->stream);
    block->requested = 0;
    const size_t orig_size = block->size;
    SplitChange change;
    block = pool.give_back(block, change);
    MemoryStats& stats = ledger.stats;
    Ledger::for_stat(pool.is_small(), [&](StatType t) {
      Ledger::add(stats.inactive_split[t], change.blocks);
      Ledger::add(stats.inactive_split_bytes[t], change.bytes);
      stats.active[t].decrease(1);
      stats.active_bytes[t].decrease(static_cast<int64_t>(orig_size));
    });
    PrivatePool* pp = pool.private_pool();
    if (!conf.caching && !block->is_split()) segments.release(block);
    private_pools.freed_into(pp);
  }

  void process_events() {
    events.process([this](Block* block) { free_block(block); });
  }

  // ---- past the cache: the out-of-memory ladder ----

  // No cached block fits: reserve (or grow an expandable segment), down the OOM ladder if need
  // be. Out of line, so that the cached path (malloc) stays small enough for the compiler to
  // keep the best-fit search inline in it.
  ANATOMY_NOINLINE Block* malloc_past_cache(size_t orig_size, size_t size, BlockPool& pool, StreamId stream) {
    const PrivatePoolSet::InFlight in_flight(private_pools, pool);
    const size_t alloc_size = segments.reservation_size(pool, size);
    // While a route is in force the ladder does not synchronize (Note [Allocating while a graph
    // captures]).
    const bool may_synchronize = !private_pools.routing();
    if (conf.garbage_collection_threshold > 0.0) segments.garbage_collect(large);
    segments.release_before_new_peak(large, pool, alloc_size, private_pools.routing());
    FoundBlock found = reserve_or_cached(pool, size, alloc_size, stream, false);
    // A live private pool's free memory is never given back (a captured graph may use it), so
    // the first rung frees oversize blocks only for the ordinary pools.
    if (!found.block && !pool.private_pool() && segments.release_oversize(pool, size, stream))
      found = reserve_or_cached(pool, size, alloc_size, stream, false);
    if (!found.block && may_synchronize) {
      release_cached_blocks();
      found = reserve_or_cached(pool, size, alloc_size, stream, true);
    }
    if (!found.block) throw_oom(orig_size, size, alloc_size, stream, pool);
    return hand_out(pool, found, orig_size, size);
  }

  // A new segment (or an expandable one grown); when that failed after dropping the lock, a
  // cached block another thread freed meanwhile, if one fits (Note [Reserving without the lock]).
  FoundBlock reserve_or_cached(BlockPool& pool, size_t size, size_t alloc_size, StreamId stream, bool is_retry) {
    if (is_retry) ++ledger.stats.num_alloc_retries;
    const uint64_t unlocked_before = segments.reservations().unlocked_reserves();
    if (Block* block = segments.reserve(pool, alloc_size, stream)) return {block, false};
    // The count moved only if this thread dropped the lock: no other thread runs while it holds it.
    if (segments.reservations().unlocked_reserves() == unlocked_before || !conf.caching) return {};
    return pool.best_fit(size, stream, conf);
  }

  // Waits for the device, finishes every waiting free, and gives back every cached segment with
  // no block in use and the free pages of expandable segments (empty_cache, the ladder's last rung).
  void release_cached_blocks() {
    provider.synchronize();
    ++ledger.stats.num_sync_all_streams;
    events.finish_all([this](Block* block) { free_block(block); });
    segments.release_free(large);
    segments.release_free(small);
    segments.shrink_expandable();
  }

  [[noreturn]] void throw_oom(size_t orig_size, size_t size, size_t alloc_size, StreamId stream,
                              const BlockPool& pool) {
    // The largest block the request could have used: its own pool's (ordinary or private).
    const PrivatePool* pp = pool.private_pool();
    size_t largest = 0;
    for (const BlockPool* p : {pp ? &pp->small : &small, pp ? &pp->large : &large}) {
      for (const Block* b : p->free_blocks()) largest = std::max(largest, b->size);
    }
    segments.throw_oom(orig_size, size, alloc_size, stream, pool, largest, private_pools.reserved_bytes());
  }

  // Every block is either free (in a pool) or active; a segment is reached from any of its blocks.
  std::vector<SegmentInfo> segment_list() const {
    SegmentList list;
    for (const BlockPool* p : {&small, &large}) {
      for (Block* b : p->free_blocks()) list.add(b);
    }
    private_pools.for_each_block_pool([&](const BlockPool& p) {
      for (Block* b : p.free_blocks()) list.add(b);
    });
    for_each_active([&](Block* b) { list.add(b); });
    return list.describe();
  }
};

namespace {

// The DataPtr's deleter: its context is the Block, so no lookup by pointer.
void free_block_of_data_ptr(void* ctx) {
  auto* block = static_cast<Block*>(ctx);
  CachingAllocator::Impl* impl = block->pool->owner();
  std::lock_guard<AllocatorMutex> g(impl->mutex);
  impl->free(block);
}

}  // namespace

CachingAllocator::CachingAllocator(MemoryProvider& provider, const AllocConf& conf) {
  check_conf(conf, provider);
  impl_ = std::make_unique<Impl>(provider, conf);
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->release_cached_blocks();
  impl_->private_pools.for_each_block_pool([&](BlockPool& pool) { impl_->segments.release_free(pool); });
  if (impl_->ledger.history.enabled()) op_name_hook::remove_listener();
  // What is left is in use by someone who will never free it through us; drop the bookkeeping
  // (the provider's memory stays with the provider, expandable segments' pages mapped).
  impl_->segments.abandon_expandable();
  std::unordered_set<Block*> heads;
  impl_->for_each_active([&](Block* b) {
    while (b->prev) b = b->prev;
    heads.insert(b);
  });
  for (Block* b : heads) {
    while (b) delete std::exchange(b, b->next);
  }
}

DataPtr CachingAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return DataPtr(nullptr, impl_->device);
  StreamId stream = impl_->provider.current_stream();
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  Block* block = impl_->malloc(nbytes, stream);
  return DataPtr(block->ptr, block, &free_block_of_data_ptr, impl_->device);
}

void* CachingAllocator::raw_alloc(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->malloc(nbytes, stream)->ptr;
}

void CachingAllocator::raw_free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  Block* block = impl_->allocated_blocks.take(ptr);
  ANATOMY_CHECK(block != nullptr, ValueError,
                "raw_free: {} was not allocated by this caching allocator (or was already freed)", ptr);
  impl_->free_unlisted(block);
}

void CachingAllocator::record_stream(void* ptr, StreamId stream) {
  if (ptr == nullptr) return;
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  Block** found = impl_->allocated_blocks.find(ptr);
  ANATOMY_CHECK(found != nullptr, ValueError,
                "record_stream: {} is not the start of a block allocated by this caching allocator", ptr);
  // Work on the allocation stream is ordered before reuse already; only other streams need events.
  if (stream != (*found)->stream) (*found)->stream_uses.insert(stream);
}

void CachingAllocator::empty_cache() {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->release_cached_blocks();
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->ledger.stats;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->ledger.stats.for_each_array([](StatArray& a) {
    for (Stat& s : a.s) s.peak = s.current;
  });
}

std::vector<SegmentInfo> CachingAllocator::segments() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->segment_list();
}

void CachingAllocator::record_memory_history(bool enabled, size_t max_entries) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  const bool was = impl_->ledger.history.enabled();
  impl_->ledger.history.set(enabled, max_entries);
  // The dispatcher names operators only while some allocator records (core/op_name_hook.h).
  if (enabled && !was) op_name_hook::add_listener();
  if (!enabled && was) op_name_hook::remove_listener();
}

MemorySnapshot CachingAllocator::memory_snapshot() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return MemorySnapshot{impl_->device,
                        impl_->segment_list(),
                        impl_->ledger.history.entries(),
                        impl_->ledger.history.max_entries(),
                        impl_->ledger.stats,
                        {}};
}

Device CachingAllocator::device() const { return impl_->device; }

AllocConf CachingAllocator::conf() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->conf;
}

// Applies to what happens next: with expandable_segments switched on, requests no cached block
// fits grow a segment; switched off, they reserve plain segments, while the blocks of existing
// expandable segments stay usable (they no longer grow) and shrink as usual.
void CachingAllocator::set_conf(const AllocConf& conf) {
  check_conf(conf, impl_->provider);
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->set_conf(conf);
}

PoolId CachingAllocator::create_pool() {
  auto state = impl_->private_pools.make();
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->private_pools.add(std::move(state));
}

void CachingAllocator::retain_pool(PoolId pool) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->private_pools.retain(pool);
}

void CachingAllocator::release_pool(PoolId pool) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->private_pools.release(pool);
}

void CachingAllocator::begin_allocate_to_pool(PoolId pool, StreamFilter filter) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->private_pools.begin_routing(pool, std::move(filter));
}

void CachingAllocator::end_allocate_to_pool(PoolId pool) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->private_pools.end_routing(pool);
  if (!impl_->private_pools.routing()) impl_->events.record_deferred();
}

PoolStats CachingAllocator::pool_stats(PoolId pool) const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->private_pools.stats(pool);
}

std::vector<PoolStats> CachingAllocator::pools() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->private_pools.all_stats();
}

}  // namespace anatomy::alloc
