// Segments (caching_segments.h): reserving segments (with the lock dropped around the provider
// when asked), releasing wholly free ones, and the OutOfMemoryError message.
#include <algorithm>
#include <limits>
#include <string>

#include "anatomy/alloc/caching_segments.h"

#include "anatomy/alloc/caching_private_pools.h"
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

size_t Segments::reservation_size(const BlockPool& pool, size_t size) const {
  // With caching off every request is a reservation of its own, released when freed.
  // With expandable segments a segment grows by the request (rounded up to its pages).
  return conf_.caching && !expandable_for(pool) ? allocation_size(size) : size;
}

Block* Segments::reserve(BlockPool& pool, size_t alloc_size, StreamId stream) {
  if (expandable_for(pool)) return expandable_.grow(pool, alloc_size, stream);
  if (reservations_.exceeds_memory_fraction(alloc_size)) return nullptr;
  void* ptr = reserve_segment(alloc_size);
  if (!ptr) return nullptr;
  reservations_.add(alloc_size);
  ++ledger_.stats.num_provider_allocs;
  ledger_.trace(TraceAction::SegmentAlloc, ptr, alloc_size, stream);
  Ledger::for_stat(pool.is_small(), [&](StatType t) {
    ledger_.stats.segment[t].increase(1);
    ledger_.stats.reserved_bytes[t].increase(static_cast<int64_t>(alloc_size));
  });
  if (PrivatePool* pp = pool.private_pool()) {
    ++pp->stats.segments;
    pp->stats.reserved_bytes += static_cast<int64_t>(alloc_size);
  }
  Block* block = spares_.make(stream, alloc_size, &pool, static_cast<char*>(ptr));
  block->segment = reservations_.next_segment();
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
//     go when its last user does, so the front pins it (PrivatePoolSet::InFlight) until the
//     request returns or throws. The new segment is accounted (stats, Reservations, the
//     history) only after the lock is back, all at once, so the stats are exact at every point
//     another thread can see them.
//   - per_process_memory_fraction: two threads must not both pass the check and reserve past
//     it. The bytes are added to Reservations' in_flight() before the lock drops and count as
//     reserved in every check until the lock is back and they are either reserved or given up.
//   - The conf may change (set_conf). The reservation goes on with the size decided before;
//     whatever it yields is a valid segment under any conf, as existing segments are when
//     set_conf changes the conf.
//   - Another thread may free a block that fits meanwhile. When the reservation succeeded the
//     new segment is used (as PyTorch does) and that block stays cached. When it failed, the
//     cache is searched again before the next rung of the OOM ladder (the front's
//     reserve_or_cached): otherwise a block freed inside a split segment, which the ladder cannot
//     release, would end in an OutOfMemoryError with a fitting block cached.
//   - Another thread may empty the cache, run the OOM ladder, or record history meanwhile:
//     each works on what is accounted, which the reservation in flight is not yet part of.

// provider.reserve, with the lock dropped around it under release_lock_on_cudamalloc. Called
// with the lock held; returns with it held, also when the provider throws.
void* Segments::reserve_segment(size_t nbytes) {
  if (!conf_.release_lock_on_cudamalloc) return provider_.reserve(nbytes);
  reservations_.begin_unlocked(nbytes);
  struct Relock {
    Segments& segments;
    size_t nbytes;
    ~Relock() {
      segments.mutex_.lock();
      segments.reservations_.end_unlocked(nbytes);
    }
  } relock{*this, nbytes};
  mutex_.unlock();
  return provider_.reserve(nbytes);
}

// ---- releasing cache ----

// garbage_collection_threshold: once reserved memory passes the threshold (a fraction of what
// may be reserved), release whole cached large segments older than the average, oldest first
// in effect, until back under it. Unlike the OOM path this never synchronizes.
void Segments::garbage_collect(BlockPool& large) {
  double threshold = conf_.garbage_collection_threshold * reservations_.allowed_memory();
  const double reserved = static_cast<double>(reservations_.total());
  if (reserved <= threshold) return;
  double target = reserved - threshold, reclaimed = 0;
  double total_age = 0;
  int64_t freeable = 0;
  auto age = [&](const Block* b) { return static_cast<double>(large.age(b)); };
  for (const Block* b : large.free_blocks()) {
    if (!b->is_split()) {
      total_age += age(b);
      ++freeable;
    }
  }
  bool freed = true;
  while (reclaimed < target && freed && freeable > 0) {
    double age_threshold = total_age / static_cast<double>(freeable);
    freed = false;
    for (auto it = large.free_blocks().begin(); it != large.free_blocks().end();) {
      Block* b = *it++;
      if (!b->is_split() && age(b) >= age_threshold) {
        freed = true;
        reclaimed += static_cast<double>(b->size);
        total_age -= age(b);
        --freeable;
        release(b);
      }
    }
  }
}

void Segments::release(Block* block) {
  if (block->expandable) {  // a whole free expandable segment: unmap it all and release it
    ANATOMY_INTERNAL_ASSERT(block->expandable->tail == block && !block->is_split(),
                            "caching allocator: release of part of an expandable segment");
    expandable_.shrink(block->expandable);
    return;
  }
  BlockPool& pool = *block->pool;
  provider_.release(block->ptr, block->size);
  reservations_.remove(block->size);
  ++ledger_.stats.num_provider_frees;
  ledger_.trace(TraceAction::SegmentFree, block->ptr, block->size, block->stream);
  Ledger::for_stat(pool.is_small(), [&](StatType t) {
    ledger_.stats.segment[t].decrease(1);
    ledger_.stats.reserved_bytes[t].decrease(static_cast<int64_t>(block->size));
  });
  if (PrivatePool* pp = pool.private_pool()) {
    --pp->stats.segments;
    pp->stats.reserved_bytes -= static_cast<int64_t>(block->size);
  }
  pool.erase(block);
  spares_.drop(block);
}

// Frees cached oversize segments (>= max_split_size) of this stream: the one just large
// enough for the request, or else the largest ones until enough is released.
bool Segments::release_oversize(BlockPool& pool, size_t size, StreamId stream) {
  if (conf_.max_split_size == std::numeric_limits<size_t>::max()) return false;
  const BlockKey key{stream, std::max(size, conf_.max_split_size), 0, nullptr};
  auto it = pool.free_blocks().lower_bound(key);
  if (it != pool.free_blocks().end() && (*it)->stream == stream && !(*it)->is_split()) {
    release(*it);
    return true;
  }
  size_t released = 0;
  while (released < key.size && it != pool.free_blocks().begin()) {
    Block* b = *std::prev(it);
    if (b->stream != stream || b->size < conf_.max_split_size) break;
    if (b->is_split()) {
      --it;
      continue;
    }
    released += b->size;
    release(b);  // invalidates only b's iterator; `it` stays valid
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
//     and go first when memory runs out (release_oversize);
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
void Segments::release_before_new_peak(BlockPool& large, const BlockPool& pool, size_t alloc_size, bool routing) {
  if (!conf_.release_before_new_peak || !conf_.caching || expandable_for(pool) || routing) return;
  if (reservations_.total() + reservations_.in_flight() + alloc_size <= reservations_.high_water()) return;
  for (auto it = large.free_blocks().begin(); it != large.free_blocks().end();) {
    Block* b = *it++;
    if (!b->is_split() && b->size < conf_.max_split_size) release(b);
  }
}

void Segments::release_free(BlockPool& pool) {
  for (auto it = pool.free_blocks().begin(); it != pool.free_blocks().end();) {
    Block* b = *it++;
    if (!b->is_split()) release(b);
  }
}

// ---- out of memory ----

void Segments::throw_oom(size_t orig_size, size_t size, size_t alloc_size, StreamId stream, const BlockPool& pool,
                         size_t largest_free, size_t private_reserved) {
  ++ledger_.stats.num_ooms;
  ledger_.trace(TraceAction::Oom, nullptr, orig_size, stream);
  const PrivatePool* pp = pool.private_pool();
  size_t allocated = static_cast<size_t>(ledger_.stats.allocated_bytes[StatType::All].current);
  size_t reserved = static_cast<size_t>(ledger_.stats.reserved_bytes[StatType::All].current);
  std::string limit;
  if (conf_.per_process_memory_fraction < 1.0) {
    limit = fmt::format(" This process may use {} of it (per_process_memory_fraction {}).",
                        format_size(static_cast<size_t>(reservations_.allowed_memory())),
                        conf_.per_process_memory_fraction);
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
                stream, routed, provider_.device().str(), format_size(provider_.total_memory()),
                format_size(provider_.free_memory()), limit, format_size(reserved), format_size(allocated),
                format_size(reserved - allocated), format_size(largest_free), format_size(private_reserved),
                use_expandable() ? "max_split_size_mb" : "max_split_size_mb or expandable_segments:True");
}

// A request over kMaxRequest, refused before rounding it.
void Segments::throw_too_large(size_t orig_size, StreamId stream) {
  ++ledger_.stats.num_ooms;
  ledger_.trace(TraceAction::Oom, nullptr, orig_size, stream);
  ANATOMY_THROW(OutOfMemoryError,
                "caching allocator: out of memory. Tried to allocate {} bytes, more than {} "
                "(device {} has a total capacity of {})",
                orig_size, kMaxRequest, provider_.device().str(), format_size(provider_.total_memory()));
}

}  // namespace anatomy::alloc
