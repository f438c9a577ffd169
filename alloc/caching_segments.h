// Segments: the caching allocator's memory from its provider. It reserves a segment when no cached
// block fits (with the lock dropped around the provider under release_lock_on_cudamalloc), or has
// an expandable segment grow (ExpandableSegments, which it owns); it gives wholly free segments
// back (one, a pool's, the oversize ones a request needs, the large pool's before a new peak, the
// old ones past garbage_collection_threshold) and has expandable segments unmap their free pages;
// it writes the OutOfMemoryError that ends the ladder. It counts every reservation, release, map
// and unmap in the Ledger and its Reservations as it goes. Which of these a request needs, in
// which order (the out-of-memory ladder), is the locked front's decision (caching_allocator.cpp).
// Not locked: called under the allocator's lock, which only reserve() drops and takes again.
#pragma once

#include <cstddef>
#include <cstdint>

#include "anatomy/alloc/alloc_conf.h"
#include "anatomy/alloc/allocator_mutex.h"
#include "anatomy/alloc/caching_block.h"
#include "anatomy/alloc/caching_block_pool.h"
#include "anatomy/alloc/caching_expandable.h"
#include "anatomy/alloc/caching_ledger.h"
#include "anatomy/alloc/caching_reservations.h"
#include "anatomy/alloc/memory_provider.h"
#include "anatomy/core/macros.h"

namespace anatomy::alloc {

// Larger requests are out of memory at once: rounding them would overflow, and no device holds
// 2^62 bytes anyway.
inline constexpr size_t kMaxRequest = size_t{1} << 62;

class Segments {
 public:
  // Each must outlive it; `conf` is the allocator's, read as it is at each call, and `mutex` the
  // allocator's lock, held around every call.
  Segments(MemoryProvider& provider, const AllocConf& conf, AllocatorMutex& mutex, Ledger& ledger, SpareBlocks& spares)
      : provider_(provider),
        conf_(conf),
        mutex_(mutex),
        ledger_(ledger),
        spares_(spares),
        reservations_(provider, conf),
        expandable_(provider, conf, ledger, spares, reservations_) {}
  Segments(const Segments&) = delete;
  Segments& operator=(const Segments&) = delete;

  const Reservations& reservations() const { return reservations_; }
  // Does an expandable segment serve requests of `pool` past the cache? Is the knob in force?
  bool expandable_for(const BlockPool& pool) const { return expandable_.serve(pool); }
  bool use_expandable() const { return expandable_.enabled(); }

  // ---- reserving ----

  // The bytes a request of `size` (rounded) bytes of `pool` needs past the cache: a segment's
  // size (allocation_size); with caching off, or growing an expandable segment, the request's.
  size_t reservation_size(const BlockPool& pool, size_t size) const;
  // A segment of `alloc_size` bytes for `pool` on `stream`, or an expandable segment grown by it:
  // one free Block over it, in no free set. nullptr when the provider has no memory or the
  // reservation would pass per_process_memory_fraction; nothing changed then. Under
  // release_lock_on_cudamalloc the lock is dropped around the provider (reservations()
  // .unlocked_reserves() counts those times), and taken again before it returns or throws.
  Block* reserve(BlockPool& pool, size_t alloc_size, StreamId stream);

  // ---- releasing ----

  // Gives the wholly free segment of `block` (a free Block with no neighbours; of an expandable
  // segment, its last) back to the provider.
  void release(Block* block);
  // Every wholly free segment of `pool`.
  void release_free(BlockPool& pool);
  // The out-of-memory ladder's first rung: cached oversize segments (>= max_split_size) of
  // `stream` in `pool`, the one just large enough for `size`, or else the largest ones until
  // enough is released. True when that made room for the request.
  bool release_oversize(BlockPool& pool, size_t size, StreamId stream);
  // Note [Releasing before a new peak]: before reserving `alloc_size` for `pool` past the most
  // ever reserved, the wholly free segments of `large` (the ordinary large pool) go. `routing`: a
  // route to a private pool is in force (nothing is released then).
  void release_before_new_peak(BlockPool& large, const BlockPool& pool, size_t alloc_size, bool routing);
  // garbage_collection_threshold: past it, `large`'s older wholly free segments go.
  void garbage_collect(BlockPool& large);
  // Expandable segments give back the whole pages of their free blocks (device synchronized).
  void shrink_expandable() { expandable_.shrink_all(); }
  // The allocator's destructor: expandable segments are forgotten, their pages left mapped.
  void abandon_expandable() { expandable_.abandon(); }

  // ---- out of memory ----

  // The OutOfMemoryError that ends the ladder for a request of `orig_size` bytes (`size`
  // rounded, needing `alloc_size`) of `pool` on `stream`, counted in num_ooms and the history.
  // `largest_free`: the largest free block the request could have used; `private_reserved`: bytes
  // reserved by private pools.
  [[noreturn]] void throw_oom(size_t orig_size, size_t size, size_t alloc_size, StreamId stream, const BlockPool& pool,
                              size_t largest_free, size_t private_reserved);
  // A request over kMaxRequest, refused before rounding it.
  [[noreturn]] ANATOMY_NOINLINE void throw_too_large(size_t orig_size, StreamId stream);

 private:
  void* reserve_segment(size_t nbytes);

  MemoryProvider& provider_;
  const AllocConf& conf_;
  AllocatorMutex& mutex_;
  Ledger& ledger_;
  SpareBlocks& spares_;
  Reservations reservations_;
  ExpandableSegments expandable_;
};

}  // namespace anatomy::alloc
