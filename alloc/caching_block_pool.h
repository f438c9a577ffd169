// BlockPool: one pool of the caching allocator's free blocks (the small or the large pool, of the
// ordinary pools or of a private pool). It owns its free set, ordered for best fit per stream
// (Note [Free blocks in segment order] in caching_block.h), and does the three operations on it:
// the best-fit search, splitting the block found, and merging a freed block with its free
// neighbours. It knows blocks and their segment lists only: the counters, the history and the
// allocated blocks are the locked front's (caching_allocator.cpp), which applies what a split or a
// merge did to the inactive split counters (SplitChange). SpareBlocks keeps the Block objects and
// free-set nodes that a split and a merge make and drop, shared by an allocator's pools.
//
// Inline: the cached allocate + free pair runs through these alone, compiled into the front's
// allocate and free. Not locked: the front holds the allocator's lock around every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "anatomy/alloc/alloc_conf.h"
#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/caching_block.h"
#include "anatomy/core/error.h"

namespace anatomy::alloc {

struct PrivatePool;  // caching_private_pools.h

// Free Blocks and empty free-set nodes, kept for the next split or merge rather than going back
// to the heap (at most kMaxSpare of each): a cached allocate + free pair splits a block and merges
// it back, and would otherwise allocate a Block and a node each time.
class SpareBlocks {
 public:
  static constexpr size_t kMaxSpare = 1024;

  SpareBlocks() = default;
  ~SpareBlocks() {
    for (Block* b : blocks_) delete b;
  }
  SpareBlocks(const SpareBlocks&) = delete;
  SpareBlocks& operator=(const SpareBlocks&) = delete;

  // A Block for [ptr, ptr + size) of `pool` on `stream`, in no list and no free set.
  ANATOMY_HOT_INLINE Block* make(StreamId stream, size_t size, BlockPool* pool, char* ptr) {
    if (blocks_.empty()) return new Block(stream, size, pool, ptr);
    Block* block = blocks_.back();
    blocks_.pop_back();
    block->reset(stream, size, pool, ptr);
    return block;
  }
  // `block` is in no list and no free set any more.
  ANATOMY_HOT_INLINE void drop(Block* block) {
    if (blocks_.size() >= kMaxSpare) {
      delete block;
      return;
    }
    blocks_.push_back(block);
  }
  void keep_node(BlockSet::node_type node) {
    if (!node.empty() && nodes_.size() < kMaxSpare) nodes_.push_back(std::move(node));
  }
  // A kept node, or an empty one when none is kept.
  BlockSet::node_type take_node() {
    if (nodes_.empty()) return {};
    BlockSet::node_type node = std::move(nodes_.back());
    nodes_.pop_back();
    return node;
  }

 private:
  std::vector<Block*> blocks_;
  std::vector<BlockSet::node_type> nodes_;
};

// What best_fit found. A block that will be split stays in the free set when its remainder (the
// same Block, shrunk from the front) still sorts after the block before it: take() then shrinks
// it in place, saving an erase and an insert.
struct FoundBlock {
  Block* block = nullptr;
  bool in_free_set = false;
};

// How a split or a merge changed the inactive split blocks (free blocks of split segments): the
// front adds these to MemoryStats' inactive_split and inactive_split_bytes.
struct SplitChange {
  int64_t blocks = 0;
  int64_t bytes = 0;
};

class BlockPool {
 public:
  // `owner`: the allocator whose DataPtrs' deleter finds it through a Block's pool; `private_pool`:
  // the private pool it belongs to (null: one of the ordinary pools).
  BlockPool(bool is_small, SpareBlocks& spares, CachingAllocator::Impl* owner, PrivatePool* private_pool = nullptr)
      : is_small_(is_small), spares_(spares), owner_(owner), private_pool_(private_pool) {}
  // Blocks point at their pool.
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  bool is_small() const { return is_small_; }
  CachingAllocator::Impl* owner() const { return owner_; }
  PrivatePool* private_pool() const { return private_pool_; }

  // ---- best fit, split, merge ----

  // The smallest free block of `stream` that fits `size` (rounded) bytes under `conf`'s
  // max_split_size rules, or none. Out of the free set unless it is to be split in place.
  FoundBlock best_fit(size_t size, StreamId stream, const AllocConf& conf);
  // Would taking `size` bytes of `block` (of this pool) split off the rest as a free block?
  bool should_split(const Block* block, size_t size, const AllocConf& conf) const;
  // The block of `size` bytes to hand out from `found` (from best_fit, or a Block of this pool in
  // no free set, such as a new segment's): its front, the rest split off and cached when
  // should_split says so. Not marked allocated: the caller does that. Adds to `change`.
  Block* take(FoundBlock found, size_t size, const AllocConf& conf, SplitChange& change);
  // Caches the freed `block`, merged with its free neighbours into one Block (`block` may be
  // deleted then); returns that Block. Adds to `change`.
  Block* give_back(Block* block, SplitChange& change);

  // ---- the free set ----

  // Into the free set, cached now (its age starts again) or keeping its age.
  void insert(Block* block) {
    block->gc_count_base = searches_;
    insert_keeping_age(block);
  }
  void insert_keeping_age(Block* block);
  // Out of the free set (when there: its key must not have changed since it went in).
  void erase(Block* block) { spares_.keep_node(blocks_.extract(block)); }
  // Moves the free whole segment `block` to `to`'s free set (a retiring private pool's).
  void hand_over(Block* block, BlockPool& to) {
    erase(block);
    block->pool = &to;
    to.insert(block);
  }
  // The free blocks, in best-fit order. Erasing one (through this pool) leaves the iterators to
  // the others valid.
  const BlockSet& free_blocks() const { return blocks_; }
  // Searches since `block` was cached, its age for garbage_collection_threshold: a clock that
  // costs nothing per block.
  uint64_t age(const Block* block) const { return searches_ - block->gc_count_base; }

 private:
  Block* merge_free_run(Block* block, Block* before, Block* after);

  BlockSet blocks_;  // free blocks only
  bool is_small_;
  SpareBlocks& spares_;
  CachingAllocator::Impl* owner_;
  uint64_t searches_ = 0;  // best_fit calls so far
  PrivatePool* private_pool_;
};

ANATOMY_HOT_INLINE FoundBlock BlockPool::best_fit(size_t size, StreamId stream, const AllocConf& conf) {
  ++searches_;
  auto it = blocks_.lower_bound(BlockKey{stream, size, 0, nullptr});
  if (it == blocks_.end() || (*it)->stream != stream) return {};
  // An oversize block is kept whole for requests that would not split it anyway, and a large
  // request does not take a block much larger than itself (the rest would be wasted, unsplit).
  if (size < conf.max_split_size && (*it)->size >= conf.max_split_size) return {};
  if (size >= conf.max_split_size && (*it)->size >= size + conf.max_non_split_rounding_size) return {};
  Block* b = *it;
  // The remainder's key is smaller than b's, so it still sorts before b's successor.
  const BlockKey remainder{stream, b->size - size, b->segment, b->ptr + size};
  if (should_split(b, size, conf) && (it == blocks_.begin() || key_less((*std::prev(it))->key(), remainder))) {
    return {b, true};
  }
  spares_.keep_node(blocks_.extract(it));
  return {b, false};
}

inline bool BlockPool::should_split(const Block* block, size_t size, const AllocConf& conf) const {
  size_t remaining = block->size - size;
  // The rest of a block in an expandable segment is never stranded: it merges with what the
  // segment maps next, so any size worth a block is split off, in either pool.
  if (is_small_ || block->expandable) return remaining >= kMinBlockSize;
  return size < conf.max_split_size && remaining > kSmallSize;
}

inline Block* BlockPool::take(FoundBlock found, size_t size, const AllocConf& conf, SplitChange& change) {
  Block* block = found.block;
  const bool already_split = block->is_split();
  const bool split = should_split(block, size, conf);
  ANATOMY_INTERNAL_ASSERT(split || !found.in_free_set,
                          "caching allocator: a cached block left in the free set is not split");
  if (split) {
    Block* remaining = block;
    block = spares_.make(remaining->stream, size, this, remaining->ptr);
    block->segment = remaining->segment;
    block->expandable = remaining->expandable;
    block->prev = remaining->prev;
    if (block->prev) block->prev->next = block;
    block->next = remaining;
    remaining->prev = block;
    remaining->ptr += size;
    remaining->size -= size;
    if (found.in_free_set) {
      remaining->gc_count_base = searches_;  // cached anew, as insert() does
    } else {
      insert(remaining);
    }
    if (already_split) {  // an inactive split block shrinks by `size`
      change.bytes -= static_cast<int64_t>(size);
    } else {  // a whole block becomes split: its remainder is a new inactive split block
      change.bytes += static_cast<int64_t>(remaining->size);
      change.blocks += 1;
    }
  } else if (already_split) {
    change.bytes -= static_cast<int64_t>(block->size);
    change.blocks -= 1;
  }
  return block;
}

inline Block* BlockPool::give_back(Block* block, SplitChange& change) {
  Block* before = is_free(block->prev) ? block->prev : nullptr;
  Block* after = is_free(block->next) ? block->next : nullptr;
  for (const Block* merged : {before, after}) {
    if (merged) {
      change.blocks -= 1;
      change.bytes -= static_cast<int64_t>(merged->size);
    }
  }
  if (before || after) {
    block = merge_free_run(block, before, after);
  } else {
    insert(block);
  }
  if (block->is_split()) {
    change.blocks += 1;
    change.bytes += static_cast<int64_t>(block->size);
  }
  return block;
}

// Joins the freed `block` with its free neighbours `before` and `after` (either may be null)
// into one Block, a neighbour: it is in the free set already, and grows in place there when it
// still sorts before its successor (growing keeps it after its predecessor), which saves an
// erase and an insert on every free that merges. The other Blocks are dropped. Returns it.
inline Block* BlockPool::merge_free_run(Block* block, Block* before, Block* after) {
  Block* keep = after ? after : before;
  Block* other = after ? before : nullptr;
  Block* first = before ? before : block;
  Block* last = after ? after : block;
  if (other) spares_.keep_node(blocks_.extract(other->free_pos));
  const auto it = keep->free_pos;
  ANATOMY_INTERNAL_ASSERT(*it == keep, "caching allocator: a free block is not where its pool's free set has it");
  const BlockKey merged{keep->stream, block->size + (before ? before->size : 0) + (after ? after->size : 0),
                        keep->segment, first->ptr};
  const auto successor = std::next(it);
  const bool in_place = successor == blocks_.end() || key_less(merged, (*successor)->key());
  if (!in_place) spares_.keep_node(blocks_.extract(it));
  Block* prev = first->prev;
  Block* next = last->next;
  keep->ptr = first->ptr;
  keep->size = merged.size;
  keep->prev = prev;
  keep->next = next;
  if (prev) prev->next = keep;
  if (next) next->prev = keep;
  if (keep->expandable && next == nullptr) keep->expandable->tail = keep;
  spares_.drop(block);
  if (other) spares_.drop(other);
  if (in_place) {
    keep->gc_count_base = searches_;  // cached anew, as insert() does
  } else {
    insert(keep);
  }
  return keep;
}

// In a kept node when there is one.
inline void BlockPool::insert_keeping_age(Block* block) {
  BlockSet::node_type node = spares_.take_node();
  if (node.empty()) {
    block->free_pos = blocks_.insert(block).first;
    return;
  }
  node.value() = block;
  block->free_pos = blocks_.insert(std::move(node)).position;
}

}  // namespace anatomy::alloc
