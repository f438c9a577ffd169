// The caching allocator's expandable segments (expandable_segments:True; docs/allocator.md
// "Expandable segments"): one growing segment per pool and stream, which maps pages at its end
// when no cached block fits, maps its holes again before growing, and on empty_cache and the
// out-of-memory ladder gives back the whole pages of its free blocks (unmapped holes inside, a
// shorter mapped part at the end). ExpandableSegment (expandable_segment.h) is the address range
// and its pages; this file keeps the blocks over it. Called with the allocator's lock held.
#include <algorithm>
#include <memory>
#include <vector>

#include "anatomy/alloc/caching_block_pool.h"
#include "anatomy/core/error.h"

namespace anatomy::alloc {

// PyTorch's page sizes: 2 MiB for the small pool, 20 MiB for the large one, in whole provider
// pages.
size_t CachingAllocator::Impl::expandable_page_size(const BlockPool& pool) const {
  const size_t granularity = provider.page_size();
  const size_t want = pool.is_small ? kSmallBuffer : kLargeBuffer;
  return (want + granularity - 1) / granularity * granularity;
}

// No cached block fits `size` (rounded): the stream's segment of this pool (made on first use,
// with room for the whole device) maps pages at its end, and the free block at the end grows
// into them, or a new free block holds them. Returns that block, not in the pool, or nullptr
// when the provider has no memory for the pages (nothing changed then).
Block* CachingAllocator::Impl::grow_expandable_segment(BlockPool& pool, size_t size, StreamId stream) {
  const auto key = std::make_pair(static_cast<const BlockPool*>(&pool), stream);
  auto found = expandable_segments.find(key);
  Expandable* es = found == expandable_segments.end() ? nullptr : found->second.get();
  Block* tail = es ? es->tail : nullptr;
  const size_t have = tail && is_free(tail) ? tail->size : 0;
  if (have >= size) {  // get_free_block turned it down for max_split_size; growing would not help
    erase_from_blocks(pool, tail);
    return tail;
  }
  if (es && !es->holes.empty()) {
    if (Block* block = map_holes(*es, size)) return block;
  }
  const size_t page = es ? es->segment->page_size() : expandable_page_size(pool);
  const size_t need = (size - have + page - 1) / page * page;
  if (exceeds_memory_fraction(need)) return nullptr;
  std::unique_ptr<ExpandableSegment> fresh;
  if (!es) {
    fresh = ExpandableSegment::create(provider, page, provider.total_memory());
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
    auto made = std::make_unique<Expandable>(Expandable{std::move(fresh), &pool, stream, nullptr, {}, next_segment()});
    es = made.get();
    expandable_segments.emplace(key, std::move(made));
    for_stat(pool, [&](StatType t) { stats.segment[t].increase(1); });
  }
  add_reserved(grown);
  trace(TraceAction::SegmentMap, old_end, grown, stream);
  for_stat(pool, [&](StatType t) { stats.reserved_bytes[t].increase(static_cast<int64_t>(grown)); });
  if (have > 0) {  // the free tail grows; alloc_found_block takes it from here
    erase_from_blocks(pool, tail);
    tail->size += grown;
    if (tail->is_split()) {
      for_stat(pool, [&](StatType t) { stats.inactive_split_bytes[t].increase(static_cast<int64_t>(grown)); });
    }
    return tail;
  }
  Block* block = new_block(stream, grown, &pool, old_end);
  block->expandable = es;
  block->segment = es->segment_number;
  block->prev = tail;
  if (tail) {  // a free block behind a used one: an inactive split block, as alloc_found_block expects
    tail->next = block;
    for_stat(pool, [&](StatType t) {
      stats.inactive_split[t].increase(1);
      stats.inactive_split_bytes[t].increase(static_cast<int64_t>(grown));
    });
  }
  es->tail = block;
  return block;
}

// Before the segment grows, a request looks for room among its holes, lowest address first (as
// PyTorch's find_expandable_block): a run of unused blocks (free ones and holes, which alternate)
// that starts at a hole or at the free block right before one and holds `size` bytes. The holes
// of the run are mapped, the last one only as far as the request needs, and the run becomes one
// free block, returned as grow_expandable_segment returns one. All or nothing: when the
// provider refuses a page, what this request mapped is unmapped again and nullptr leaves
// everything as it was.
Block* CachingAllocator::Impl::map_holes(Expandable& es, size_t size) {
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
  if (conf.per_process_memory_fraction < 1.0 && static_cast<double>(total_reserved + to_map) > allowed_memory()) {
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
    Block* rest = new_block(es.stream, last->size - run.back().map, &pool, last->ptr + run.back().map);
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
      erase_from_blocks(pool, b);
      ++merged;
      merged_bytes += static_cast<int64_t>(b->size);
    } else {
      es.holes.erase(b);
      trace(TraceAction::SegmentMap, b->ptr, piece.map, es.stream);
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
  for (size_t i = 1; i < run.size(); ++i) delete_block(run[i].block);
  add_reserved(to_map);
  // What alloc_found_block expects: a split block counts as an inactive split one.
  const bool split = first->is_split();
  for_stat(pool, [&](StatType t) {
    stats.reserved_bytes[t].increase(static_cast<int64_t>(to_map));
    if (merged > 0) {
      stats.inactive_split[t].decrease(merged);
      stats.inactive_split_bytes[t].decrease(merged_bytes);
    }
    if (split) {
      stats.inactive_split[t].increase(1);
      stats.inactive_split_bytes[t].increase(static_cast<int64_t>(first->size));
    }
  });
  return first;
}

// Every expandable segment gives back the whole pages inside its free blocks: those in the
// middle become unmapped blocks (holes), those at the end shrink the segment. Called with the
// device synchronized (empty_cache, the OOM ladder's release step).
void CachingAllocator::Impl::shrink_expandable_segments() {
  for (auto it = expandable_segments.begin(); it != expandable_segments.end();) {
    Expandable* es = (it++)->second.get();  // shrinking may erase it
    unmap_inner_free_pages(*es);
    shrink_expandable_segment(es);
  }
}

// Unmaps the pages entirely inside the segment's free last block: the block shrinks to the part
// before its first whole page, or goes, and a hole before it goes too (the segment's end moves
// back over it), after which the new last block is shrunk in turn when it is free. A segment
// left with nothing mapped releases its range.
void CachingAllocator::Impl::shrink_expandable_segment(Expandable* es) {
  while (is_free(es->tail)) {
    Block* tail = es->tail;
    BlockPool& pool = *tail->pool;
    ExpandableSegment& seg = *es->segment;
    const size_t unmapped = counted(seg, [&] { return seg.shrink_to(tail->ptr); });
    if (unmapped == 0) return;
    total_reserved -= unmapped;
    trace(TraceAction::SegmentUnmap, seg.mapped_end(), unmapped, tail->stream);
    const bool was_split = tail->is_split();
    erase_from_blocks(pool, tail);
    for_stat(pool, [&](StatType t) {
      stats.reserved_bytes[t].decrease(static_cast<int64_t>(unmapped));
      if (was_split) stats.inactive_split_bytes[t].decrease(static_cast<int64_t>(unmapped));
    });
    if (unmapped < tail->size) {
      tail->size -= unmapped;
      insert_keeping_age(tail);  // keeps its age for garbage collection
      return;
    }
    if (was_split) for_stat(pool, [&](StatType t) { stats.inactive_split[t].decrease(1); });
    // Free neighbours are merged, so the block before is in use or a hole.
    es->tail = tail->prev;
    delete_block(tail);
    if (es->tail && !es->tail->mapped) {  // its pages are unmapped already: the end moves back
      Block* hole = es->tail;
      seg.shrink_to(hole->ptr);
      es->holes.erase(hole);
      es->tail = hole->prev;
      delete_block(hole);
    }
    if (!es->tail) {
      seg.release_range();
      for_stat(pool, [&](StatType t) { stats.segment[t].decrease(1); });
      expandable_segments.erase(std::make_pair(static_cast<const BlockPool*>(es->pool), es->stream));
      return;
    }
    es->tail->next = nullptr;
  }
}

// Every free block before the segment's last one gives back the whole pages inside it (as
// PyTorch's release_cached_blocks unmaps them): they become a hole, merged with a hole next to
// it, between what is left of the block before and after them (free blocks still).
void CachingAllocator::Impl::unmap_inner_free_pages(Expandable& es) {
  for (Block* b = es.tail ? es.tail->prev : nullptr; b != nullptr;) {
    Block* before = b->prev;  // stays: only b and the holes after it can go
    if (is_free(b)) unmap_free_block(es, b);
    b = before;
  }
}

void CachingAllocator::Impl::unmap_free_block(Expandable& es, Block* block) {
  ExpandableSegment& seg = *es.segment;
  BlockPool& pool = *block->pool;
  ExpandableSegment::Range range;
  counted(seg, [&] {
    range = seg.unmap(block->ptr, block->size);
    return range.size;
  });
  if (range.size == 0) return;
  char* const pages = block->ptr + range.offset;
  erase_from_blocks(pool, block);
  const size_t head = range.offset, rest = block->size - range.offset - range.size;
  int64_t free_blocks = -1;  // the block was a free split block; what is left of it still is
  if (head > 0) {
    Block* front = new_block(block->stream, head, &pool, block->ptr);
    front->segment = block->segment;
    link_before(front, block);
    front->gc_count_base = block->gc_count_base;
    insert_keeping_age(front);
    ++free_blocks;
  }
  if (rest > 0) {
    Block* back = new_block(block->stream, rest, &pool, block->ptr + head + range.size);
    back->segment = block->segment;
    link_after(back, block);
    back->gc_count_base = block->gc_count_base;
    insert_keeping_age(back);
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
    delete_block(next);
  }
  if (hole->prev && !hole->prev->mapped) {  // this one joins the hole before
    Block* prev = hole->prev;
    prev->size += hole->size;
    unlink(hole);
    delete_block(hole);
    hole = prev;
  } else {
    es.holes.insert(hole);
  }
  total_reserved -= range.size;
  trace(TraceAction::SegmentUnmap, pages, range.size, es.stream);
  for_stat(pool, [&](StatType t) {
    stats.reserved_bytes[t].decrease(static_cast<int64_t>(range.size));
    stats.inactive_split_bytes[t].decrease(static_cast<int64_t>(range.size));
    if (free_blocks < 0) stats.inactive_split[t].decrease(-free_blocks);
    if (free_blocks > 0) stats.inactive_split[t].increase(free_blocks);
  });
}

}  // namespace anatomy::alloc
