// The caching allocator's block pool, the hot path: rounding a request, the best-fit search of a
// pool's free set, splitting the block found, and on free merging it with its free neighbours
// (or, after record_stream, waiting for other streams' events first). Inline, as members of
// CachingAllocator::Impl: the cached allocate + free pair runs through these alone, and the
// locked front (caching_allocator.cpp) compiles them into its allocate and free. The other parts
// include this file for the free-set operations. docs/allocator.md explains the policy.
#pragma once

#include <iterator>
#include <utility>

#include "anatomy/alloc/caching_allocator_impl.h"
#include "anatomy/core/error.h"
#include "anatomy/core/op_name_hook.h"

namespace anatomy::alloc {

// ---- sizes and spare Blocks ----

inline size_t CachingAllocator::Impl::rounded_size(size_t size) const {
  if (!plain_rounding) return round_size(size, conf);
  return size < kMinBlockSize ? kMinBlockSize : (size + kMinBlockSize - 1) & ~(kMinBlockSize - 1);
}

ANATOMY_HOT_INLINE Block* CachingAllocator::Impl::new_block(StreamId stream, size_t size, BlockPool* pool, char* ptr) {
  if (spare_blocks.empty()) return new Block(stream, size, pool, ptr);
  Block* block = spare_blocks.back();
  spare_blocks.pop_back();
  block->reset(stream, size, pool, ptr);
  return block;
}

ANATOMY_HOT_INLINE void CachingAllocator::Impl::delete_block(Block* block) {
  if (spare_blocks.size() >= kMaxSpare) {
    delete block;
    return;
  }
  spare_blocks.push_back(block);
}

// ---- allocation: best fit, then split ----

// A cached block when one fits; otherwise malloc_past_cache (caching_segments.cpp) reserves.
inline Block* CachingAllocator::Impl::malloc(size_t orig_size, StreamId stream) {
  if (orig_size > kMaxRequest) throw_too_large(orig_size, stream);
  // Note [Allocating while a graph captures]: no event is queried while a route is in force.
  if (ANATOMY_LIKELY(!private_pools.routing())) process_events();
  size_t size = rounded_size(orig_size);
  BlockPool& pool = pool_for(size, stream);
  FoundBlock found = conf.caching ? get_free_block(pool, size, stream) : FoundBlock{};
  if (found.block) return alloc_found_block(found.block, orig_size, size, found.in_free_set);
  return malloc_past_cache(orig_size, size, pool, stream);
}

// The first route that takes the request sends it to its private pool's small or large pool;
// with no route in force this costs one branch.
inline BlockPool& CachingAllocator::Impl::pool_for(size_t size, StreamId stream) {
  if (ANATOMY_UNLIKELY(private_pools.routing())) {
    if (auto* pp = static_cast<PrivatePool*>(private_pools.route(stream))) {
      return size <= kSmallSize ? pp->small : pp->large;
    }
  }
  return size <= kSmallSize ? small : large;
}

ANATOMY_HOT_INLINE CachingAllocator::Impl::FoundBlock CachingAllocator::Impl::get_free_block(BlockPool& pool,
                                                                                             size_t size,
                                                                                             StreamId stream) {
  ++pool.get_free_block_calls;
  auto it = pool.blocks.lower_bound(BlockKey{stream, size, 0, nullptr});
  if (it == pool.blocks.end() || (*it)->stream != stream) return {};
  // An oversize block is kept whole for requests that would not split it anyway, and a large
  // request does not take a block much larger than itself (the rest would be wasted, unsplit).
  if (size < conf.max_split_size && (*it)->size >= conf.max_split_size) return {};
  if (size >= conf.max_split_size && (*it)->size >= size + conf.max_non_split_rounding_size) return {};
  Block* b = *it;
  // The remainder's key is smaller than b's, so it still sorts before b's successor.
  const BlockKey remainder{stream, b->size - size, b->segment, b->ptr + size};
  if (should_split(b, size) && (it == pool.blocks.begin() || key_less((*std::prev(it))->key(), remainder))) {
    return {b, true};
  }
  keep_node(pool.blocks.extract(it));
  return {b, false};
}

inline bool CachingAllocator::Impl::should_split(const Block* block, size_t size) const {
  size_t remaining = block->size - size;
  // The rest of a block in an expandable segment is never stranded: it merges with what the
  // segment maps next, so any size worth a block is split off, in either pool.
  if (block->pool->is_small || block->expandable) return remaining >= kMinBlockSize;
  return size < conf.max_split_size && remaining > kSmallSize;
}

// `in_free_set`: get_free_block left the block in the free set, to be split in place.
inline Block* CachingAllocator::Impl::alloc_found_block(Block* block, size_t orig_size, size_t size, bool in_free_set) {
  BlockPool& pool = *block->pool;
  const bool already_split = block->is_split();
  const bool split = should_split(block, size);
  ANATOMY_INTERNAL_ASSERT(split || !in_free_set, "caching allocator: a cached block left in the free set is not split");
  if (split) {
    Block* remaining = block;
    block = new_block(remaining->stream, size, &pool, remaining->ptr);
    block->segment = remaining->segment;
    block->expandable = remaining->expandable;
    block->prev = remaining->prev;
    if (block->prev) block->prev->next = block;
    block->next = remaining;
    remaining->prev = block;
    remaining->ptr += size;
    remaining->size -= size;
    if (in_free_set) {
      remaining->gc_count_base = pool.get_free_block_calls;  // cached anew, as insert_into_blocks does
    } else {
      insert_into_blocks(remaining);
    }
    for_stat(pool, [&](StatType t) {
      if (already_split) {  // an inactive split block shrinks by `size`
        stats.inactive_split_bytes[t].decrease(static_cast<int64_t>(size));
      } else {  // a whole block becomes split: its remainder is a new inactive split block
        stats.inactive_split_bytes[t].increase(static_cast<int64_t>(remaining->size));
        stats.inactive_split[t].increase(1);
      }
    });
  } else if (already_split) {
    for_stat(pool, [&](StatType t) {
      stats.inactive_split_bytes[t].decrease(static_cast<int64_t>(block->size));
      stats.inactive_split[t].decrease(1);
    });
  }
  block->allocated = true;
  block->requested = orig_size;
  block->op = nullptr;
  if (ANATOMY_UNLIKELY(history.enabled())) {
    history.record(TraceAction::Alloc, block->ptr, orig_size, block->stream);
    block->op = op_name_hook::current();
  }
  allocated_blocks.insert(block->ptr, block);
  for_stat(pool, [&](StatType t) {
    stats.allocation[t].increase(1);
    stats.allocated_bytes[t].increase(static_cast<int64_t>(block->size));
    stats.active[t].increase(1);
    stats.active_bytes[t].increase(static_cast<int64_t>(block->size));
    stats.requested_bytes[t].increase(static_cast<int64_t>(orig_size));
  });
  if (PrivatePool* pp = pool.private_pool) {
    ++pp->stats.allocations;
    pp->stats.allocated_bytes += static_cast<int64_t>(block->size);
  }
  return block;
}

// ---- freeing: merge, or wait for the events of record_stream ----

inline void CachingAllocator::Impl::free(Block* block) {
  allocated_blocks.erase(block->ptr);
  free_unlisted(block);
}

// free() of a block already taken out of allocated_blocks (raw_free looks it up and takes it
// out in one probe).
inline void CachingAllocator::Impl::free_unlisted(Block* block) {
  block->allocated = false;
  trace(TraceAction::FreeRequested, block->ptr, block->requested, block->stream);
  for_stat(*block->pool, [&](StatType t) {
    stats.allocation[t].decrease(1);
    stats.allocated_bytes[t].decrease(static_cast<int64_t>(block->size));
    stats.requested_bytes[t].decrease(static_cast<int64_t>(block->requested));
  });
  if (PrivatePool* pp = block->pool->private_pool) {
    --pp->stats.allocations;
    pp->stats.allocated_bytes -= static_cast<int64_t>(block->size);
  }
  if (block->stream_uses.empty()) {
    free_block(block);
    return;
  }
  if (ANATOMY_UNLIKELY(private_pools.routing())) {  // Note [Allocating while a graph captures]
    block->event_count = 1;                         // active, neither free nor mergeable, until its events are recorded
    blocks_awaiting_events.push_back(block);
    return;
  }
  insert_events(block);
}

// Other streams may still be using `block`: its reuse waits for an event recorded on each (Note
// in docs/allocator.md, "record_stream"); process_events() finishes the free later.
inline void CachingAllocator::Impl::insert_events(Block* block) {
  for (StreamId s : block->stream_uses) {
    EventId e = provider.create_event();
    provider.record_event(e, s);
    ++block->event_count;
    outstanding_events[s].emplace_back(e, block);
  }
  block->stream_uses.clear();
}

// Returns the block to its pool, merged with free neighbours (`block` may be deleted then).
inline void CachingAllocator::Impl::free_block(Block* block) {
  BlockPool& pool = *block->pool;
  // The request stays known while the free waits for events, for the trace and the snapshot.
  trace(TraceAction::FreeCompleted, block->ptr, block->requested, block->stream);
  block->requested = 0;
  const size_t orig_size = block->size;
  Block* before = is_free(block->prev) ? block->prev : nullptr;
  Block* after = is_free(block->next) ? block->next : nullptr;
  int64_t net_blocks = 0, net_bytes = 0;  // of inactive split blocks
  for (const Block* merged : {before, after}) {
    if (merged) {
      net_blocks -= 1;
      net_bytes -= static_cast<int64_t>(merged->size);
    }
  }
  if (before || after) {
    block = merge_free_run(block, before, after, pool);
  } else {
    insert_into_blocks(block);
  }
  if (block->is_split()) {
    net_blocks += 1;
    net_bytes += static_cast<int64_t>(block->size);
  }
  for_stat(pool, [&](StatType t) {
    if (net_blocks > 0) stats.inactive_split[t].increase(net_blocks);
    if (net_blocks < 0) stats.inactive_split[t].decrease(-net_blocks);
    if (net_bytes > 0) stats.inactive_split_bytes[t].increase(net_bytes);
    if (net_bytes < 0) stats.inactive_split_bytes[t].decrease(-net_bytes);
    stats.active[t].decrease(1);
    stats.active_bytes[t].decrease(static_cast<int64_t>(orig_size));
  });
  PrivatePool* pp = pool.private_pool;
  if (!conf.caching && !block->is_split()) release_block(block);
  if (ANATOMY_UNLIKELY(pp != nullptr) && pp->stats.use_count == 0) retire_pool(*pp);
}

// Joins the freed `block` with its free neighbours `before` and `after` (either may be null)
// into one Block, a neighbour: it is in the free set already, and grows in place there when it
// still sorts before its successor (growing keeps it after its predecessor), which saves an
// erase and an insert on every free that merges. The other Blocks are deleted. Returns it.
inline Block* CachingAllocator::Impl::merge_free_run(Block* block, Block* before, Block* after, BlockPool& pool) {
  Block* keep = after ? after : before;
  Block* other = after ? before : nullptr;
  Block* first = before ? before : block;
  Block* last = after ? after : block;
  if (other) keep_node(pool.blocks.extract(other->free_pos));
  const auto it = keep->free_pos;
  ANATOMY_INTERNAL_ASSERT(*it == keep, "caching allocator: a free block is not where its pool's free set has it");
  const BlockKey merged{keep->stream, block->size + (before ? before->size : 0) + (after ? after->size : 0),
                        keep->segment, first->ptr};
  const auto successor = std::next(it);
  const bool in_place = successor == pool.blocks.end() || key_less(merged, (*successor)->key());
  if (!in_place) keep_node(pool.blocks.extract(it));
  Block* prev = first->prev;
  Block* next = last->next;
  keep->ptr = first->ptr;
  keep->size = merged.size;
  keep->prev = prev;
  keep->next = next;
  if (prev) prev->next = keep;
  if (next) next->prev = keep;
  if (keep->expandable && next == nullptr) keep->expandable->tail = keep;
  delete_block(block);
  if (other) delete_block(other);
  if (in_place) {
    keep->gc_count_base = pool.get_free_block_calls;  // cached anew, as insert_into_blocks does
  } else {
    insert_into_blocks(keep);
  }
  return keep;
}

// Finishes frees whose events have completed, without blocking. Per stream, events complete
// in order, so the first incomplete one ends that stream's scan.
inline void CachingAllocator::Impl::process_events() {
  for (auto it = outstanding_events.begin(); it != outstanding_events.end();) {
    auto& queue = it->second;
    while (!queue.empty() && provider.query_event(queue.front().first)) {
      finish_event(queue.front());
      queue.pop_front();
    }
    it = queue.empty() ? outstanding_events.erase(it) : std::next(it);
  }
}

inline void CachingAllocator::Impl::finish_event(std::pair<EventId, Block*> entry) {
  provider.destroy_event(entry.first);
  if (--entry.second->event_count == 0) free_block(entry.second);
}

// ---- the free sets ----

inline void CachingAllocator::Impl::insert_into_blocks(Block* block) {
  block->gc_count_base = block->pool->get_free_block_calls;
  insert_keeping_age(block);
}

// Into its pool's free set, in a kept node when there is one.
inline void CachingAllocator::Impl::insert_keeping_age(Block* block) {
  if (spare_nodes.empty()) {
    block->free_pos = block->pool->blocks.insert(block).first;
    return;
  }
  BlockSet::node_type node = std::move(spare_nodes.back());
  spare_nodes.pop_back();
  node.value() = block;
  block->free_pos = block->pool->blocks.insert(std::move(node)).position;
}

// Out of `pool`'s free set (when there: its key must not have changed since it went in).
inline void CachingAllocator::Impl::erase_from_blocks(BlockPool& pool, Block* block) {
  keep_node(pool.blocks.extract(block));
}

inline void CachingAllocator::Impl::keep_node(BlockSet::node_type node) {
  if (!node.empty() && spare_nodes.size() < kMaxSpare) spare_nodes.push_back(std::move(node));
}

}  // namespace anatomy::alloc
