// ExpandableSegments: the caching allocator's expandable segments (expandable_segments:True;
// docs/allocator.md "Expandable segments"), one growing segment per pool and stream. When no
// cached block fits, a segment maps its holes again or maps pages at its end; on empty_cache and
// the out-of-memory ladder it gives back the whole pages of its free blocks (holes inside, a
// shorter mapped part at the end). ExpandableSegment (expandable_segment.h) is one segment's
// address range and pages; this component keeps the Blocks over them (Expandable, caching_block.h)
// and counts what it maps into the Reservations and the Ledger. The segments part
// (caching_segments.h) owns it and calls it. Not locked: called under the allocator's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "anatomy/alloc/alloc_conf.h"
#include "anatomy/alloc/caching_block.h"
#include "anatomy/alloc/caching_block_pool.h"
#include "anatomy/alloc/caching_ledger.h"
#include "anatomy/alloc/caching_reservations.h"
#include "anatomy/alloc/expandable_segment.h"
#include "anatomy/alloc/memory_provider.h"

namespace anatomy::alloc {

class ExpandableSegments {
 public:
  // Each must outlive it; `conf` is the allocator's, read as it is at each call.
  ExpandableSegments(MemoryProvider& provider, const AllocConf& conf, Ledger& ledger, SpareBlocks& spares,
                     Reservations& reservations)
      : provider_(provider), conf_(conf), ledger_(ledger), spares_(spares), reservations_(reservations) {}
  ExpandableSegments(const ExpandableSegments&) = delete;
  ExpandableSegments& operator=(const ExpandableSegments&) = delete;

  // Caching off means every request is a reservation of its own, whatever the knob says.
  bool enabled() const { return conf_.expandable_segments && conf_.caching; }
  // Private pools keep plain segments (as PyTorch's do): a pool's segments change owner when the
  // pool dies, which a growing segment tied to its pool and stream cannot.
  bool serve(const BlockPool& pool) const { return enabled() && pool.private_pool() == nullptr; }

  // No cached block fits `size` (rounded) bytes of `pool` on `stream`: a free block of `size` or
  // more made of the stream's segment (made on first use, with room for the whole device), by
  // mapping holes or pages at its end. That block is in no free set; nullptr when the provider
  // has no memory for the pages (nothing changed then).
  Block* grow(BlockPool& pool, size_t size, StreamId stream);
  // Every segment gives back the whole pages inside its free blocks. Called with the device
  // synchronized (empty_cache, the out-of-memory ladder's release step).
  void shrink_all();
  // Unmaps the pages of `es`'s free last block (and a hole before it, and so on back); a segment
  // left with nothing mapped releases its range and goes.
  void shrink(Expandable* es);
  // Forgets every segment, its pages left mapped: the allocator's destructor, with blocks still in
  // use by someone who will never free them.
  void abandon();

 private:
  size_t page_size(const BlockPool& pool) const;
  Block* map_holes(Expandable& es, size_t size);
  void unmap_inner_free_pages(Expandable& es);
  void unmap_free_block(Expandable& es, Block* block);
  // Runs a grow or shrink of `seg`, counting the provider's map and unmap calls it made.
  template <typename F>
  size_t counted(ExpandableSegment& seg, F&& f) {
    const int64_t maps = seg.maps(), unmaps = seg.unmaps();
    const size_t bytes = f();
    ledger_.stats.num_provider_maps += seg.maps() - maps;
    ledger_.stats.num_provider_unmaps += seg.unmaps() - unmaps;
    return bytes;
  }

  MemoryProvider& provider_;
  const AllocConf& conf_;
  Ledger& ledger_;
  SpareBlocks& spares_;
  Reservations& reservations_;
  // At most one growing segment per pool and stream.
  std::map<std::pair<const BlockPool*, StreamId>, std::unique_ptr<Expandable>> segments_;
};

}  // namespace anatomy::alloc
