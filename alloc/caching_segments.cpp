// The caching allocator's segments: reserving one when no cached block fits (the out-of-memory
// ladder: garbage collection, releasing before a new peak, releasing oversize blocks, releasing
// the whole cache and retrying), with the lock dropped around the provider under
// release_lock_on_cudamalloc; releasing cached segments (empty_cache, the ladder); and the
// OutOfMemoryError that ends the ladder. Expandable segments grow and shrink in
// caching_expandable.cpp. Called with the allocator's lock held.
#include <algorithm>
#include <limits>
#include <string>

#include "anatomy/alloc/caching_block_pool.h"
#include "anatomy/core/error.h"

namespace anatomy::alloc {
namespace {

std::string format_size(size_t n) {
  if (n < 1024) return fmt::format("{} bytes", n);
  if (n < kMB) return fmt::format("{:.2f} KiB", static_cast<double>(n) / 1024);
  if (n < 1024 * kMB) return fmt::format("{:.2f} MiB", static_cast<double>(n) / static_cast<double>(kMB));
  return fmt::format("{:.2f} GiB", static_cast<double>(n) / static_cast<double>(1024 * kMB));
}

}  // namespace

// No cached block fits: reserve (or grow an expandable segment), down the OOM ladder if need
// be. Out of line, so that the cached path (malloc, caching_block_pool.h) stays small enough for
// the compiler to keep get_free_block inline in it.
Block* CachingAllocator::Impl::malloc_past_cache(size_t orig_size, size_t size, BlockPool& pool, StreamId stream) {
  const PoolInFlight in_flight(*this, pool);
  // With caching off every request is a reservation of its own, released when freed.
  // With expandable segments a segment grows by the request (rounded up to its pages).
  size_t alloc_size = conf.caching && !expandable_for(pool) ? allocation_size(size) : size;
  // While a route is in force the ladder does not synchronize (Note [Allocating while a graph
  // captures]).
  const bool may_synchronize = !private_pools.routing();
  if (conf.garbage_collection_threshold > 0.0) garbage_collect_cached_blocks();
  release_cached_segments_before_new_peak(pool, alloc_size);
  FoundBlock found = alloc_block_or_cached(pool, size, alloc_size, stream, false);
  // A live private pool's free memory is never given back (a captured graph may use it), so
  // the first rung frees oversize blocks only for the ordinary pools.
  if (!found.block && !pool.private_pool && release_available_cached_blocks(pool, size, stream))
    found = alloc_block_or_cached(pool, size, alloc_size, stream, false);
  if (!found.block && may_synchronize) {
    release_cached_blocks();
    found = alloc_block_or_cached(pool, size, alloc_size, stream, true);
  }
  if (!found.block) throw_oom(orig_size, size, alloc_size, stream, pool);
  return alloc_found_block(found.block, orig_size, size, found.in_free_set);
}

Block* CachingAllocator::Impl::alloc_block(BlockPool& pool, size_t alloc_size, StreamId stream, bool is_retry) {
  if (is_retry) ++stats.num_alloc_retries;
  if (expandable_for(pool)) return grow_expandable_segment(pool, alloc_size, stream);
  if (exceeds_memory_fraction(alloc_size)) return nullptr;
  void* ptr = reserve_segment(alloc_size);
  if (!ptr) return nullptr;
  add_reserved(alloc_size);
  ++stats.num_provider_allocs;
  trace(TraceAction::SegmentAlloc, ptr, alloc_size, stream);
  for_stat(pool, [&](StatType t) {
    stats.segment[t].increase(1);
    stats.reserved_bytes[t].increase(static_cast<int64_t>(alloc_size));
  });
  if (PrivatePool* pp = pool.private_pool) {
    ++pp->stats.segments;
    pp->stats.reserved_bytes += static_cast<int64_t>(alloc_size);
  }
  Block* block = new_block(stream, alloc_size, &pool, static_cast<char*>(ptr));
  block->segment = next_segment();
  return block;
}

// ---- reserving without the lock (release_lock_on_cudamalloc) ----
//
// Note [Reserving without the lock]
// cudaMalloc can take milliseconds (the driver may synchronize or zero pages), and with the
// allocator's lock held every other thread's allocate and free waits that long, though most
// are served from the cache. With release_lock_on_cudamalloc:True (PyTorch's knob, same place),
// reserve_segment drops the lock around provider.reserve and takes it again after. Only the
// plain reservation does: mapping pages of an expandable segment changes the segment's state
// and stays under the lock, as in PyTorch. While the lock is dropped anything may happen, so:
//   - Nothing this thread holds may depend on state that another thread can change meanwhile.
//     The BlockPools of the ordinary pools live as long as the allocator; a private pool could
//     go when its last user does, so malloc pins it (PoolInFlight) until it returns or throws.
//     The new segment is accounted (stats, total_reserved, the history) only after the lock is
//     back, all at once, so the stats are exact at every point another thread can see them.
//   - per_process_memory_fraction: two threads must not both pass the check and reserve past
//     it. The bytes are added to `reserving` before the lock drops and count as reserved in
//     every check until the lock is back and they are either reserved or given up.
//   - The conf may change (set_conf). The reservation goes on with the size decided before;
//     whatever it yields is a valid segment under any conf, as existing segments are when
//     set_conf changes the conf.
//   - Another thread may free a block that fits meanwhile. When the reservation succeeded the
//     new segment is used (as PyTorch does) and that block stays cached. When it failed, the
//     cache is searched again before the next rung of the OOM ladder
//     (alloc_block_or_cached): otherwise a block freed inside a split segment, which the ladder
//     cannot release, would end in an OutOfMemoryError with a fitting block cached.
//   - Another thread may empty the cache, run the OOM ladder, or record history meanwhile:
//     each works on what is accounted, which the reservation in flight is not yet part of.

// provider.reserve, with the lock dropped around it under release_lock_on_cudamalloc. Called
// with the lock held; returns with it held, also when the provider throws.
void* CachingAllocator::Impl::reserve_segment(size_t nbytes) {
  if (!conf.release_lock_on_cudamalloc) return provider.reserve(nbytes);
  ++unlocked_reserves;
  reserving += nbytes;
  struct Relock {
    Impl& impl;
    size_t nbytes;
    ~Relock() {
      impl.mutex.lock();
      impl.reserving -= nbytes;
    }
  } relock{*this, nbytes};
  mutex.unlock();
  return provider.reserve(nbytes);
}

// alloc_block; when that failed after dropping the lock, a cached block another thread freed
// meanwhile, if one fits (Note [Reserving without the lock]).
CachingAllocator::Impl::FoundBlock CachingAllocator::Impl::alloc_block_or_cached(BlockPool& pool, size_t size,
                                                                                 size_t alloc_size, StreamId stream,
                                                                                 bool is_retry) {
  const uint64_t unlocked_before = unlocked_reserves;
  if (Block* block = alloc_block(pool, alloc_size, stream, is_retry)) return {block, false};
  // The count moved only if this thread dropped the lock: no other thread runs while it holds it.
  if (unlocked_reserves == unlocked_before || !conf.caching) return {};
  return get_free_block(pool, size, stream);
}

double CachingAllocator::Impl::allowed_memory() const {
  return conf.per_process_memory_fraction * static_cast<double>(provider.total_memory());
}

// Would reserving `nbytes` more pass per_process_memory_fraction? Reservations other threads
// are making without the lock count as made.
bool CachingAllocator::Impl::exceeds_memory_fraction(size_t nbytes) const {
  return conf.per_process_memory_fraction < 1.0 &&
         static_cast<double>(total_reserved + reserving + nbytes) > allowed_memory();
}

void CachingAllocator::Impl::insert_deferred_events() {
  if (private_pools.routing()) return;
  for (Block* block : blocks_awaiting_events) {
    block->event_count = 0;  // the placeholder of free_unlisted
    insert_events(block);
  }
  blocks_awaiting_events.clear();
}

void CachingAllocator::Impl::synchronize_and_free_events() {
  provider.synchronize();
  ++stats.num_sync_all_streams;
  for (auto& [stream, queue] : outstanding_events) {
    for (auto& entry : queue) finish_event(entry);
  }
  outstanding_events.clear();
}

// ---- releasing cache ----

// garbage_collection_threshold: once reserved memory passes the threshold (a fraction of what
// may be reserved), release whole cached large segments older than the average, oldest first
// in effect, until back under it. Unlike the OOM path this never synchronizes.
void CachingAllocator::Impl::garbage_collect_cached_blocks() {
  double threshold = conf.garbage_collection_threshold * allowed_memory();
  if (static_cast<double>(total_reserved) <= threshold) return;
  double target = static_cast<double>(total_reserved) - threshold, reclaimed = 0;
  double total_age = 0;
  int64_t freeable = 0;
  auto age = [&](const Block* b) { return static_cast<double>(large.get_free_block_calls - b->gc_count_base); };
  for (const Block* b : large.blocks) {
    if (!b->is_split()) {
      total_age += age(b);
      ++freeable;
    }
  }
  bool freed = true;
  while (reclaimed < target && freed && freeable > 0) {
    double age_threshold = total_age / static_cast<double>(freeable);
    freed = false;
    for (auto it = large.blocks.begin(); it != large.blocks.end();) {
      Block* b = *it++;
      if (!b->is_split() && age(b) >= age_threshold) {
        freed = true;
        reclaimed += static_cast<double>(b->size);
        total_age -= age(b);
        --freeable;
        release_block(b);
      }
    }
  }
}

void CachingAllocator::Impl::release_block(Block* block) {
  if (block->expandable) {  // a whole free expandable segment: unmap it all and release it
    ANATOMY_INTERNAL_ASSERT(block->expandable->tail == block && !block->is_split(),
                            "caching allocator: release of part of an expandable segment");
    shrink_expandable_segment(block->expandable);
    return;
  }
  BlockPool& pool = *block->pool;
  provider.release(block->ptr, block->size);
  total_reserved -= block->size;
  ++stats.num_provider_frees;
  trace(TraceAction::SegmentFree, block->ptr, block->size, block->stream);
  for_stat(pool, [&](StatType t) {
    stats.segment[t].decrease(1);
    stats.reserved_bytes[t].decrease(static_cast<int64_t>(block->size));
  });
  if (PrivatePool* pp = pool.private_pool) {
    --pp->stats.segments;
    pp->stats.reserved_bytes -= static_cast<int64_t>(block->size);
  }
  erase_from_blocks(pool, block);
  delete_block(block);
}

// Frees cached oversize segments (>= max_split_size) of this stream: the one just large
// enough for the request, or else the largest ones until enough is released.
bool CachingAllocator::Impl::release_available_cached_blocks(BlockPool& pool, size_t size, StreamId stream) {
  if (conf.max_split_size == std::numeric_limits<size_t>::max()) return false;
  const BlockKey key{stream, std::max(size, conf.max_split_size), 0, nullptr};
  auto it = pool.blocks.lower_bound(key);
  if (it != pool.blocks.end() && (*it)->stream == stream && !(*it)->is_split()) {
    release_block(*it);
    return true;
  }
  size_t released = 0;
  while (released < key.size && it != pool.blocks.begin()) {
    Block* b = *std::prev(it);
    if (b->stream != stream || b->size < conf.max_split_size) break;
    if (b->is_split()) {
      --it;
      continue;
    }
    released += b->size;
    release_block(b);  // invalidates only b's iterator; `it` stays valid
  }
  return released >= key.size;
}

// Note [Releasing before a new peak]
// PyTorch's policy keeps every cached segment until memory runs out (or empty_cache, or
// garbage_collection_threshold). A request that no cached block fits then reserves a new
// segment on top of wholly free ones that did not fit it, and when that sets a new peak of
// reserved memory, every byte of those free segments is part of the peak. So before such a
// reservation the large pool's wholly free segments are given back; only then, because below
// the peak keeping them costs nothing and saves a reservation when a later request fits one.
// Kept even then:
//   - the small pool's: a 2 MiB segment saves little and costs a provider release as a large
//     one does;
//   - oversize ones (max_split_size_mb): they wait for the requests that may use them whole,
//     and go first when memory runs out (release_available_cached_blocks);
//   - everything, when an expandable segment serves the request (it grows by pages, and its
//     free pages go back only on empty_cache and the OOM ladder, as in PyTorch), while a route
//     to a private pool is in force (a graph may be being captured, and a capture must not see
//     a cudaFree), and with caching off (nothing is cached).
// On the recorded training trace this takes peak reserved / peak allocated from 1.043 to 1.032,
// on the synthetic one from 1.319 to 1.041 (docs/allocator.md "Fragmentation"). The cost is a
// provider release per segment (cudaFree, which waits for the device), and a reservation for a
// later request that a released segment would have served; both only while the peak still
// grows: when a step is the longest yet, as in the first steps of a training loop.
// release_before_new_peak:False turns the rule off (PyTorch's policy exactly).
// The high-water mark is the allocator's own, not the peak of reserved_bytes, which
// reset_peak_stats lowers: a training loop that resets the peak every step would otherwise give
// back its cache every step.
void CachingAllocator::Impl::release_cached_segments_before_new_peak(const BlockPool& pool, size_t alloc_size) {
  if (!conf.release_before_new_peak || !conf.caching || expandable_for(pool) || private_pools.routing()) return;
  if (total_reserved + reserving + alloc_size <= reserved_high_water) return;
  for (auto it = large.blocks.begin(); it != large.blocks.end();) {
    Block* b = *it++;
    if (!b->is_split() && b->size < conf.max_split_size) release_block(b);
  }
}

void CachingAllocator::Impl::add_reserved(size_t nbytes) {
  total_reserved += nbytes;
  reserved_high_water = std::max(reserved_high_water, total_reserved);
}

void CachingAllocator::Impl::release_blocks(BlockPool& pool) {
  for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
    Block* b = *it++;
    if (!b->is_split()) release_block(b);
  }
}

void CachingAllocator::Impl::release_cached_blocks() {
  synchronize_and_free_events();
  release_blocks(large);
  release_blocks(small);
  shrink_expandable_segments();
}

// ---- out of memory ----

[[noreturn]] void CachingAllocator::Impl::throw_oom(size_t orig_size, size_t size, size_t alloc_size, StreamId stream,
                                                    const BlockPool& pool) {
  ++stats.num_ooms;
  trace(TraceAction::Oom, nullptr, orig_size, stream);
  // The largest block the request could have used: its own pool's (ordinary or private).
  const PrivatePool* pp = pool.private_pool;
  size_t largest = 0;
  for (const BlockPool* p : {pp ? &pp->small : &small, pp ? &pp->large : &large}) {
    for (const Block* b : p->blocks) largest = std::max(largest, b->size);
  }
  size_t allocated = static_cast<size_t>(stats.allocated_bytes[StatType::All].current);
  size_t reserved = static_cast<size_t>(stats.reserved_bytes[StatType::All].current);
  std::string limit;
  if (conf.per_process_memory_fraction < 1.0) {
    limit = fmt::format(" This process may use {} of it (per_process_memory_fraction {}).",
                        format_size(static_cast<size_t>(allowed_memory())), conf.per_process_memory_fraction);
  }
  std::string routed;
  if (pp) routed = fmt::format(" (routed to private pool {})", pp->stats.id.value);
  ANATOMY_THROW(OutOfMemoryError,
                "caching allocator: out of memory. Tried to allocate {} (a {} block, {}) on "
                "stream {}{}. Device {} has a total capacity of {} of which {} is free.{} Of the memory reserved "
                "by anatomy ({}), {} is allocated and {} is reserved but unallocated (largest free block: {}); "
                "private pools (graph pools) hold {} of the reserved memory, usable only by requests routed to "
                "them. If reserved but unallocated memory is large, try {} in ANATOMY_CUDA_ALLOC_CONF "
                "to limit fragmentation.",
                format_size(orig_size), format_size(size),
                expandable_for(pool) ? fmt::format("mapping up to {} more", format_size(alloc_size))
                                     : fmt::format("needing a {} segment", format_size(alloc_size)),
                stream, routed, provider.device().str(), format_size(provider.total_memory()),
                format_size(provider.free_memory()), limit, format_size(reserved), format_size(allocated),
                format_size(reserved - allocated), format_size(largest),
                format_size(static_cast<size_t>(private_pools.reserved_bytes())),
                use_expandable_segments() ? "max_split_size_mb" : "max_split_size_mb or expandable_segments:True");
}

// A request over kMaxRequest, refused before rounding it.
void CachingAllocator::Impl::throw_too_large(size_t orig_size, StreamId stream) {
  ++stats.num_ooms;
  trace(TraceAction::Oom, nullptr, orig_size, stream);
  ANATOMY_THROW(OutOfMemoryError,
                "caching allocator: out of memory. Tried to allocate {} bytes, more than {} "
                "(device {} has a total capacity of {})",
                orig_size, kMaxRequest, provider.device().str(), format_size(provider.total_memory()));
}

}  // namespace anatomy::alloc
