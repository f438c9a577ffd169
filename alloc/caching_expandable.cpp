// ExpandableSegments (caching_expandable.h): growing a segment by mapping holes or pages at its
// end, shrinking it, and unmapping the whole pages of its free blocks.
#include <algorithm>
#include <memory>
#include <vector>

#include "anatomy/alloc/caching_expandable.h"
#include "anatomy/core/error.h"

namespace anatomy::alloc {

// PyTorch's page sizes: 2 MiB for the small pool, 20 MiB for the large one, in whole provider
// pages.
size_t ExpandableSegments::page_size(const BlockPool& pool) const {
  const size_t granularity = provider_.page_size();
  const size_t want = pool.is_small() ? kSmallBuffer : kLargeBuffer;
  return (want + granularity - 1) / granularity * granularity;
}

// No cached block fits `size` (rounded): the stream's segment of this pool (made on first use,
// with room for the whole device) maps pages at its end, and the free block at the end grows
// into them, or a new free block holds them. Returns that block, not in the pool, or nullptr
// when the provider has no memory for the pages (nothing changed then).
Block* ExpandableSegments::grow(BlockPool& pool, size_t size, StreamId stream) {
  const auto key = std::make_pair(static_cast<const BlockPool*>(&pool), stream);
  auto found = segments_.find(key);
  Expandable* es = found == segments_.end() ? nullptr : found->second.get();
  Block* tail = es ? es->tail : nullptr;
  const size_t have = tail && is_free(tail) ? tail->size : 0;
  if (have >= size) {  // best_fit turned it down for max_split_size; growing would not help
    pool.erase(tail);
    return tail;
  }
  if (es && !es->holes.empty()) {
    if (Block* block = map_holes(*es, size)) return block;
  }
  const size_t page = es ? es->segment->page_size() : page_size(pool);
  const size_t need = (size - have + page - 1) / page * page;
  if (reservations_.exceeds_memory_fraction(need)) return nullptr;
  std::unique_ptr<ExpandableSegment> fresh;
  if (!es) {
    fresh = ExpandableSegment::create(provider_, page, provider_.total_memory());
    if (!fresh) return nullptr;
  }
  ExpandableSegment& seg = es ? *es->segment : *fresh;
  char* old_end = seg.mapped_end();
  const size_t grown = counted(seg, [&] { return seg.grow(need); });
  if (grown == 0) {
    if (fresh) fresh->release_range();
    return nullptr;
  }
  if (fresh) {
    auto made = std::make_unique<Expandable>(
        Expandable{std::move(fresh), &pool, stream, nullptr, {}, reservations_.next_segment()});
    es = made.get();
    segments_.emplace(key, std::move(made));
    Ledger::for_stat(pool.is_small(), [&](StatType t) { ledger_.stats.segment[t].increase(1); });
  }
  reservations_.add(grown);
  ledger_.trace(TraceAction::SegmentMap, old_end, grown, stream);
  Ledger::for_stat(pool.is_small(),
                   [&](StatType t) { ledger_.stats.reserved_bytes[t].increase(static_cast<int64_t>(grown)); });
  if (have > 0) {  // the free tail grows; BlockPool::take takes it from here
    pool.erase(tail);
    tail->size += grown;
    if (tail->is_split()) {
      Ledger::for_stat(pool.is_small(), [&](StatType t) {
        ledger_.stats.inactive_split_bytes[t].increase(static_cast<int64_t>(grown));
      });
    }
    return tail;
  }
  Block* block = spares_.make(stream, grown, &pool, old_end);
  block->expandable = es;
  block->segment = es->segment_number;
  block->prev = tail;
  if (tail) {  // a free block behind a used one: an inactive split block, as BlockPool::take expects
    tail->next = block;
    Ledger::for_stat(pool.is_small(), [&](StatType t) {
      ledger_.stats.inactive_split[t].increase(1);
      ledger_.stats.inactive_split_bytes[t].increase(static_cast<int64_t>(grown));
    });
  }
  es->tail = block;
  return block;
}

// Before the segment grows, a request looks for room among its holes, lowest address first (as
// PyTorch's find_expandable_block): a run of unused blocks (free ones and holes, which alternate)
// that starts at a hole or at the free block right before one and holds `size` bytes. The holes
// of the run are mapped, the last one only as far as the request needs, and the run becomes one
// free block, returned as grow() returns one. All or nothing: when the
// provider refuses a page, what this request mapped is unmapped again and nullptr leaves
// everything as it was.
Block* ExpandableSegments::map_holes(Expandable& es, size_t size) {
  ExpandableSegment& seg = *es.segment;
  const size_t page = seg.page_size();
  Block* first = nullptr;
  for (Block* hole : es.holes) {
    Block* start = is_free(hole->prev) ? hole->prev : hole;
    size_t bytes = 0;
    for (Block* b = start; b != nullptr && bytes < size && is_unused(b); b = b->next) bytes += b->size;
    if (bytes >= size) {
      first = start;
      break;
    }
  }
  if (first == nullptr) return nullptr;
  struct Piece {
    Block* block;
    size_t map;  // bytes to map at the front of a hole
  };
  std::vector<Piece> run;
  size_t covered = 0, to_map = 0;
  for (Block* b = first; covered < size; b = b->next) {
    const size_t map = b->mapped ? 0 : std::min(b->size, (size - covered + page - 1) / page * page);
    covered += b->mapped ? b->size : map;
    to_map += map;
    run.push_back({b, map});
  }
  // A hole mapped whole joins the free block after it too: free blocks never touch.
  if (Block* last = run.back().block; !last->mapped && run.back().map == last->size && is_free(last->next)) {
    covered += last->next->size;
    run.push_back({last->next, 0});
  }
  if (conf_.per_process_memory_fraction < 1.0 &&
      static_cast<double>(reservations_.total() + to_map) > reservations_.allowed_memory()) {
    return nullptr;
  }
  const size_t mapped = counted(seg, [&]() -> size_t {
    for (size_t i = 0; i < run.size(); ++i) {
      if (run[i].map == 0 || seg.map(run[i].block->ptr, run[i].map)) continue;
      for (size_t j = i; j-- > 0;) {
        if (run[j].map > 0) seg.unmap(run[j].block->ptr, run[j].map);
      }
      return 0;
    }
    return to_map;
  });
  if (mapped == 0) return nullptr;
  BlockPool& pool = *first->pool;
  Block* last = run.back().block;
  if (!last->mapped && run.back().map < last->size) {  // the rest of the last hole stays one
    Block* rest = spares_.make(es.stream, last->size - run.back().map, &pool, last->ptr + run.back().map);
    rest->segment = es.segment_number;
    rest->mapped = false;
    link_after(rest, last);
    last->size = run.back().map;
    es.holes.insert(rest);
  }
  int64_t merged = 0, merged_bytes = 0;  // free split blocks that join the run's block
  for (const Piece& piece : run) {
    Block* b = piece.block;
    if (b->mapped) {
      pool.erase(b);
      ++merged;
      merged_bytes += static_cast<int64_t>(b->size);
    } else {
      es.holes.erase(b);
      ledger_.trace(TraceAction::SegmentMap, b->ptr, piece.map, es.stream);
    }
  }
  Block* after = last->next;
  first->size = covered;
  first->mapped = true;
  first->next = after;
  if (after) {
    after->prev = first;
  } else {
    es.tail = first;
  }
  for (size_t i = 1; i < run.size(); ++i) spares_.drop(run[i].block);
  reservations_.add(to_map);
  // What BlockPool::take expects: a split block counts as an inactive split one.
  const bool split = first->is_split();
  Ledger::for_stat(pool.is_small(), [&](StatType t) {
    ledger_.stats.reserved_bytes[t].increase(static_cast<int64_t>(to_map));
    if (merged > 0) {
      ledger_.stats.inactive_split[t].decrease(merged);
      ledger_.stats.inactive_split_bytes[t].decrease(merged_bytes);
    }
    if (split) {
      ledger_.stats.inactive_split[t].increase(1);
      ledger_.stats.inactive_split_bytes[t].increase(static_cast<int64_t>(first->size));
    }
  });
  return first;
}

// Every expandable segment gives back the whole pages inside its free blocks: those in the
// middle become unmapped blocks (holes), those at the end shrink the segment. Called with the
// device synchronized (empty_cache, the OOM ladder's release step).
void ExpandableSegments::shrink_all() {
  for (auto it = segments_.begin(); it != segments_.end();) {
    Expandable* es = (it++)->second.get();  // shrinking may erase it
    unmap_inner_free_pages(*es);
    shrink(es);
  }
}

// Unmaps the pages entirely inside the segment's free last block: the block shrinks to the part
// before its first whole page, or goes, and a hole before it goes too (the segment's end moves
// back over it), after which the new last block is shrunk in turn when it is free. A segment
// left with nothing mapped releases its range.
void ExpandableSegments::shrink(Expandable* es) {
  while (is_free(es->tail)) {
    Block* tail = es->tail;
    BlockPool& pool = *tail->pool;
    ExpandableSegment& seg = *es->segment;
    const size_t unmapped = counted(seg, [&] { return seg.shrink_to(tail->ptr); });
    if (unmapped == 0) return;
    reservations_.remove(unmapped);
    ledger_.trace(TraceAction::SegmentUnmap, seg.mapped_end(), unmapped, tail->stream);
    const bool was_split = tail->is_split();
    pool.erase(tail);
    Ledger::for_stat(pool.is_small(), [&](StatType t) {
      ledger_.stats.reserved_bytes[t].decrease(static_cast<int64_t>(unmapped));
      if (was_split) ledger_.stats.inactive_split_bytes[t].decrease(static_cast<int64_t>(unmapped));
    });
    if (unmapped < tail->size) {
      tail->size -= unmapped;
      pool.insert_keeping_age(tail);  // keeps its age for garbage collection
      return;
    }
    if (was_split) Ledger::for_stat(pool.is_small(), [&](StatType t) { ledger_.stats.inactive_split[t].decrease(1); });
    // Free neighbours are merged, so the block before is in use or a hole.
    es->tail = tail->prev;
    spares_.drop(tail);
    if (es->tail && !es->tail->mapped) {  // its pages are unmapped already: the end moves back
      Block* hole = es->tail;
      seg.shrink_to(hole->ptr);
      es->holes.erase(hole);
      es->tail = hole->prev;
      spares_.drop(hole);
    }
    if (!es->tail) {
      seg.release_range();
      Ledger::for_stat(pool.is_small(), [&](StatType t) { ledger_.stats.segment[t].decrease(1); });
      segments_.erase(std::make_pair(static_cast<const BlockPool*>(es->pool), es->stream));
      return;
    }
    es->tail->next = nullptr;
  }
}

// Every free block before the segment's last one gives back the whole pages inside it (as
// PyTorch's release_cached_blocks unmaps them): they become a hole, merged with a hole next to
// it, between what is left of the block before and after them (free blocks still).
void ExpandableSegments::unmap_inner_free_pages(Expandable& es) {
  for (Block* b = es.tail ? es.tail->prev : nullptr; b != nullptr;) {
    Block* before = b->prev;  // stays: only b and the holes after it can go
    if (is_free(b)) unmap_free_block(es, b);
    b = before;
  }
}

void ExpandableSegments::unmap_free_block(Expandable& es, Block* block) {
  ExpandableSegment& seg = *es.segment;
  BlockPool& pool = *block->pool;
  ExpandableSegment::Range range;
  counted(seg, [&] {
    range = seg.unmap(block->ptr, block->size);
    return range.size;
  });
  if (range.size == 0) return;
  char* const pages = block->ptr + range.offset;
  pool.erase(block);
  const size_t head = range.offset, rest = block->size - range.offset - range.size;
  int64_t free_blocks = -1;  // the block was a free split block; what is left of it still is
  if (head > 0) {
    Block* front = spares_.make(block->stream, head, &pool, block->ptr);
    front->segment = block->segment;
    link_before(front, block);
    front->gc_count_base = block->gc_count_base;
    pool.insert_keeping_age(front);
    ++free_blocks;
  }
  if (rest > 0) {
    Block* back = spares_.make(block->stream, rest, &pool, block->ptr + head + range.size);
    back->segment = block->segment;
    link_after(back, block);
    back->gc_count_base = block->gc_count_base;
    pool.insert_keeping_age(back);
    ++free_blocks;
  }
  block->ptr += head;
  block->size = range.size;
  block->mapped = false;
  Block* hole = block;
  if (hole->next && !hole->next->mapped) {  // the next hole joins this one
    Block* next = hole->next;
    es.holes.erase(next);
    hole->size += next->size;
    unlink(next);
    spares_.drop(next);
  }
  if (hole->prev && !hole->prev->mapped) {  // this one joins the hole before
    Block* prev = hole->prev;
    prev->size += hole->size;
    unlink(hole);
    spares_.drop(hole);
    hole = prev;
  } else {
    es.holes.insert(hole);
  }
  reservations_.remove(range.size);
  ledger_.trace(TraceAction::SegmentUnmap, pages, range.size, es.stream);
  Ledger::for_stat(pool.is_small(), [&](StatType t) {
    ledger_.stats.reserved_bytes[t].decrease(static_cast<int64_t>(range.size));
    ledger_.stats.inactive_split_bytes[t].decrease(static_cast<int64_t>(range.size));
    if (free_blocks < 0) ledger_.stats.inactive_split[t].decrease(-free_blocks);
    if (free_blocks > 0) ledger_.stats.inactive_split[t].increase(free_blocks);
  });
}

void ExpandableSegments::abandon() {
  for (auto& [key, es] : segments_) (void)es->segment.release();
}

}  // namespace anatomy::alloc
