// The caching allocator's blocks (internal to the allocator's files; docs/allocator.md "The code"
// lists them). A segment, reserved from the provider, is tiled by Blocks in a doubly linked list
// in address order; a free Block is in its BlockPool's free set, ordered for best fit. The
// operations on free sets (best-fit search, split, merge) are BlockPool's, in caching_block_pool.h;
// segments (caching_segments.h) make and release the Blocks that tile a whole segment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <unordered_set>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/expandable_segment.h"
#include "anatomy/alloc/memory_provider.h"

// The cached allocate + free pair is the hot path (at most 100 ns: docs/perf.md). Functions on it that
// the slow path also calls are forced inline: a second call site makes GCC keep them out of line.
#if defined(__GNUC__) || defined(__clang__)
#define ANATOMY_HOT_INLINE [[gnu::always_inline]] inline
#else
#define ANATOMY_HOT_INLINE inline
#endif

namespace anatomy::alloc {

struct Block;
class BlockPool;
struct Expandable;

// What free blocks are ordered by; a search key needs no Block.
struct BlockKey {
  StreamId stream;
  size_t size;
  uint64_t segment;  // the block's segment's number, in the order segments were made
  const char* ptr;
};

// Note [Free blocks in segment order]
// Best fit per stream: blocks of one stream sorted by size; among blocks of one size, those of
// older segments first, and within a segment lower addresses first (which keeps allocations
// packed toward the start of segments). PyTorch breaks the tie by address alone, so which block
// a request gets depends on where the device put each segment, and so does fragmentation: on the
// recorded training trace peak reserved / peak allocated ranged from 1.051 to 1.056 over ten
// placements of the same segments (1.047-1.054 over CUDA, PyTorch's and anatomy's). By the
// segments' age it is one figure on every device (1.043 there), and older segments, which have
// had longer to fill, are the ones kept busy, so newer ones empty first and can be given back.
struct BlockComparator {
  using is_transparent = void;  // lower_bound takes a BlockKey
  bool operator()(const Block* a, const Block* b) const;
  bool operator()(const BlockKey& a, const Block* b) const;
  bool operator()(const Block* a, const BlockKey& b) const;
};

using BlockSet = std::set<Block*, BlockComparator>;

struct Block {
  StreamId stream;
  size_t size;
  size_t requested = 0;
  BlockPool* pool;
  char* ptr;
  uint64_t segment = 0;  // its segment's number (Note [Free blocks in segment order])
  bool allocated = false;
  int event_count = 0;                       // outstanding record_stream events
  uint64_t gc_count_base = 0;                // its pool's search count when it was last cached
  std::unordered_set<StreamId> stream_uses;  // other streams that used the block
  const char* op = nullptr;                  // who allocated it, while the history records
  Expandable* expandable = nullptr;          // its segment, when that is an expandable one
  bool mapped = true;                        // false: unmapped pages of an expandable segment
  // Neighbours within the segment; a block with neither is a whole segment.
  Block* prev = nullptr;
  Block* next = nullptr;
  // Where it is in its pool's free set, while it is there: a merge finds the free neighbour it
  // grows, and takes out the other one, without a search.
  BlockSet::iterator free_pos{};

  Block(StreamId s, size_t sz, BlockPool* p, char* addr) : stream(s), size(sz), pool(p), ptr(addr) {}
  // A kept Block made new for another place (stream_uses is empty: only a free block is kept).
  void reset(StreamId s, size_t sz, BlockPool* p, char* addr) {
    stream = s;
    size = sz;
    requested = 0;
    pool = p;
    ptr = addr;
    allocated = false;
    event_count = 0;
    gc_count_base = 0;
    op = nullptr;
    expandable = nullptr;
    mapped = true;
    prev = next = nullptr;
    segment = 0;
  }
  bool is_split() const { return prev != nullptr || next != nullptr; }
  BlockKey key() const { return {stream, size, segment, ptr}; }
};

struct BlockAddressLess {
  bool operator()(const Block* a, const Block* b) const { return std::less<const char*>()(a->ptr, b->ptr); }
};

// The blocks over one expandable segment (expandable_segments:True) of one pool and stream, as
// ExpandableSegments (caching_expandable.h) keeps them: its address range, the block at the end
// of its mapped part, which is the one that grows into new pages and gives whole pages back when
// it is free, and its unmapped blocks (holes, in address order): whole pages that empty_cache
// took from free blocks inside the segment. A hole is a Block with
// `mapped` false, in no free set; it never touches another hole, and the last block is never one.
struct Expandable {
  std::unique_ptr<ExpandableSegment> segment;
  BlockPool* pool;
  StreamId stream;
  Block* tail = nullptr;
  std::set<Block*, BlockAddressLess> holes;
  uint64_t segment_number = 0;  // what its blocks' `segment` is
};

ANATOMY_HOT_INLINE bool key_less(const BlockKey& a, const BlockKey& b) {
  if (a.stream != b.stream) return a.stream < b.stream;
  if (a.size != b.size) return a.size < b.size;
  if (a.segment != b.segment) return a.segment < b.segment;
  return std::less<const char*>()(a.ptr, b.ptr);
}

// Inline: the free set's searches call them several times per allocate and free.
ANATOMY_HOT_INLINE bool BlockComparator::operator()(const Block* a, const Block* b) const {
  return key_less(a->key(), b->key());
}
ANATOMY_HOT_INLINE bool BlockComparator::operator()(const BlockKey& a, const Block* b) const {
  return key_less(a, b->key());
}
ANATOMY_HOT_INLINE bool BlockComparator::operator()(const Block* a, const BlockKey& b) const {
  return key_less(a->key(), b);
}

// Neither allocated nor waiting for events, and mapped: in its pool's free set (null: no block).
inline bool is_free(const Block* b) { return b != nullptr && !b->allocated && b->event_count == 0 && b->mapped; }
// Free or unmapped: a place a request may take once its unmapped pages are mapped.
inline bool is_unused(const Block* b) { return b != nullptr && !b->allocated && b->event_count == 0; }

// Puts `b` into the block list of `at`'s segment, right before or after it; takes it out.
inline void link_before(Block* b, Block* at) {
  b->expandable = at->expandable;
  b->prev = at->prev;
  b->next = at;
  if (at->prev) at->prev->next = b;
  at->prev = b;
}
inline void link_after(Block* b, Block* at) {
  b->expandable = at->expandable;
  b->next = at->next;
  b->prev = at;
  if (at->next) at->next->prev = b;
  at->next = b;
}
inline void unlink(Block* b) {
  if (b->prev) b->prev->next = b->next;
  if (b->next) b->next->prev = b->prev;
}

}  // namespace anatomy::alloc
