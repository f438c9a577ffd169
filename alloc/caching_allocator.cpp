// The caching allocator's policy (see caching_allocator.h and docs/allocator.md). It follows
// PyTorch's CUDACachingAllocator: the names of the steps (get_free_block, alloc_block,
// release_available_cached_blocks, free_block, ...) are PyTorch's, so the two read side by side.
#include "anatomy/alloc/caching_allocator.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <unordered_set>
#include <vector>

#include "anatomy/alloc/allocator_mutex.h"
#include "anatomy/alloc/expandable_segment.h"
#include "anatomy/alloc/memory_history.h"
#include "anatomy/alloc/memory_snapshot.h"
#include "anatomy/core/error.h"
#include "anatomy/core/op_name_hook.h"
#include "anatomy/core/pointer_map.h"

// The cached allocate + free pair is the hot path (at most 100 ns: docs/perf.md). Functions on it that
// the slow path also calls are forced inline: a second call site makes GCC keep them out of line.
#if defined(__GNUC__) || defined(__clang__)
#define ANATOMY_HOT_INLINE [[gnu::always_inline]] inline
#else
#define ANATOMY_HOT_INLINE inline
#endif

namespace anatomy::alloc {

struct Block;
struct Expandable;
struct PrivatePool;

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

struct BlockPool {
  BlockSet blocks;  // free blocks only
  bool is_small;
  CachingAllocator::Impl* owner;
  // Searches so far; a free block's age (for garbage_collection_threshold) is the number of
  // searches since it was cached, so the clock costs nothing per block.
  uint64_t get_free_block_calls = 0;
  PrivatePool* private_pool = nullptr;  // the private pool it belongs to, if any
};

struct Block {
  StreamId stream;
  size_t size;
  size_t requested = 0;
  BlockPool* pool;
  char* ptr;
  uint64_t segment = 0;  // its segment's number (Note [Free blocks in segment order])
  bool allocated = false;
  int event_count = 0;                       // outstanding record_stream events
  uint64_t gc_count_base = 0;                // pool's search count when it was last cached
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

// An expandable segment (expandable_segments:True) of one pool and stream: its address range,
// the block at the end of its mapped part, which is the one that grows into new pages and gives
// whole pages back when it is free, and its unmapped blocks (holes, in address order): whole
// pages that empty_cache took from free blocks inside the segment. A hole is a Block with
// `mapped` false, in no free set; it never touches another hole, and the last block is never one.
struct Expandable {
  std::unique_ptr<ExpandableSegment> segment;
  BlockPool* pool;
  StreamId stream;
  Block* tail = nullptr;
  std::set<Block*, BlockAddressLess> holes;
  uint64_t segment_number = 0;  // what its blocks' `segment` is
};

// A private pool's own block pools; private_pool.h keeps its id, users and counters.
struct PrivatePool final : PoolState {
  BlockPool small, large;
  // Requests for it past the cache, which may drop the allocator's lock (Note [Reserving without
  // the lock]): the pool stays until they are done, even when its last user goes meanwhile.
  int requests_in_flight = 0;
  explicit PrivatePool(CachingAllocator::Impl* owner)
      : small{{}, true, owner, 0, this}, large{{}, false, owner, 0, this} {}
};

namespace {

ANATOMY_HOT_INLINE bool key_less(const BlockKey& a, const BlockKey& b) {
  if (a.stream != b.stream) return a.stream < b.stream;
  if (a.size != b.size) return a.size < b.size;
  if (a.segment != b.segment) return a.segment < b.segment;
  return std::less<const char*>()(a.ptr, b.ptr);
}

}  // namespace

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

namespace {

constexpr size_t kMaxRequest = size_t{1} << 62;

std::string format_size(size_t n) {
  if (n < 1024) return fmt::format("{} bytes", n);
  if (n < kMB) return fmt::format("{:.2f} KiB", static_cast<double>(n) / 1024);
  if (n < 1024 * kMB) return fmt::format("{:.2f} MiB", static_cast<double>(n) / static_cast<double>(kMB));
  return fmt::format("{:.2f} GiB", static_cast<double>(n) / static_cast<double>(1024 * kMB));
}

void check_conf(const AllocConf& conf, const MemoryProvider& provider) {
  ANATOMY_CHECK(!conf.expandable_segments || provider.supports_virtual_memory(), NotImplementedError,
                "caching allocator: expandable_segments:True is not supported by the memory provider of {} "
                "(it has no virtual memory management); use expandable_segments:False",
                provider.device().str());
  ANATOMY_CHECK(conf.backend == AllocBackend::Native, NotImplementedError,
                "caching allocator: backend:cudaMallocAsync is not a policy of this allocator (it is the native "
                "backend); CUDA devices serve that setting with cuda::AsyncAllocator (backends/cuda/memory/async_allocator.h)");
}

// The next multiple of 2^floor(log2 size) / divisions above `size` (1200 MB, 4 -> 1280 MB).
size_t roundup_power2_next_division(size_t size, size_t divisions) {
  if (std::has_single_bit(size)) return size;
  size_t power2_floor = std::bit_floor(size);
  size_t step = power2_floor / divisions;
  if (step == 0) return power2_floor << 1;
  size_t floor = size & ~(step - 1);
  return floor == size ? size : floor + step;
}

}  // namespace

size_t round_size(size_t size, const AllocConf& conf) {
  if (size < kMinBlockSize) return kMinBlockSize;
  size_t divisions = conf.divisions_for(size);
  if (divisions > 1 && size > kMinBlockSize * divisions) return roundup_power2_next_division(size, divisions);
  return (size + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t allocation_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

struct CachingAllocator::Impl {
  MemoryProvider& provider;
  const Device device;  // the provider's, asked once: every DataPtr carries it
  AllocConf conf;
  // No roundup_power2_divisions set: round_size is a 512-byte round up, done inline.
  bool plain_rounding = true;
  mutable AllocatorMutex mutex;
  BlockPool small{{}, true, this}, large{{}, false, this};
  // Allocated blocks by pointer, for raw_free and record_stream (a DataPtr carries its Block).
  // The active blocks (docs/allocator.md) are these and those in outstanding_events.
  PointerMap<Block*> allocated_blocks;
  std::map<StreamId, std::deque<std::pair<EventId, Block*>>> outstanding_events;
  MemoryStats stats;
  size_t total_reserved = 0;
  // The most ever reserved at once; reset_peak_stats leaves it (Note [Releasing before a new peak]).
  size_t reserved_high_water = 0;
  // Segments made so far: the next one's number (Note [Free blocks in segment order]).
  uint64_t segments_made = 0;
  uint64_t next_segment() { return ++segments_made; }
  // release_lock_on_cudamalloc: bytes being reserved by threads that dropped the lock for it, and
  // how many such reservations began (Note [Reserving without the lock]).
  size_t reserving = 0;
  uint64_t unlocked_reserves = 0;
  MemoryHistory history;
  // expandable_segments: at most one growing segment per pool and stream.
  std::map<std::pair<const BlockPool*, StreamId>, std::unique_ptr<Expandable>> expandable_segments;
  PrivatePools private_pools;

  // A cached allocate + free pair splits a block and merges it back: the Block objects and the
  // free sets' nodes that this makes and drops are kept for the next pair rather than going
  // back to the heap (at most kMaxSpare of each).
  static constexpr size_t kMaxSpare = 1024;
  std::vector<Block*> spare_blocks;              // free Blocks, reset when used again
  std::vector<BlockSet::node_type> spare_nodes;  // empty nodes of the free sets

  Impl(MemoryProvider& p, const AllocConf& c) : provider(p), device(p.device()) { set_conf(c); }
  ~Impl() {
    for (Block* b : spare_blocks) delete b;
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void set_conf(const AllocConf& c) {
    conf = c;
    plain_rounding = std::all_of(c.roundup_power2_divisions.begin(), c.roundup_power2_divisions.end(),
                                 [](size_t d) { return d <= 1; });
  }

  size_t rounded_size(size_t size) const {
    if (!plain_rounding) return round_size(size, conf);
    return size < kMinBlockSize ? kMinBlockSize : (size + kMinBlockSize - 1) & ~(kMinBlockSize - 1);
  }

  ANATOMY_HOT_INLINE Block* new_block(StreamId stream, size_t size, BlockPool* pool, char* ptr) {
    if (spare_blocks.empty()) return new Block(stream, size, pool, ptr);
    Block* block = spare_blocks.back();
    spare_blocks.pop_back();
    block->reset(stream, size, pool, ptr);
    return block;
  }

  ANATOMY_HOT_INLINE void delete_block(Block* block) {
    if (spare_blocks.size() >= kMaxSpare) {
      delete block;
      return;
    }
    spare_blocks.push_back(block);
  }

  // Every active block: allocated, or freed and waiting for events (once per event).
  template <typename F>
  void for_each_active(F&& f) const {
    allocated_blocks.for_each([&](const void*, Block* b) { f(b); });
    for (const auto& [stream, queue] : outstanding_events) {
      for (const auto& entry : queue) f(entry.second);
    }
  }

  void trace(TraceAction action, const void* address, size_t size, StreamId stream) {
    if (ANATOMY_UNLIKELY(history.enabled())) history.record(action, address, size, stream);
  }

  template <typename F>
  void for_stat(const BlockPool& pool, F&& f) {
    f(StatType::All);
    f(pool.is_small ? StatType::Small : StatType::Large);
  }

  // ---- allocation ----

  Block* malloc(size_t orig_size, StreamId stream) {
    if (orig_size > kMaxRequest) {  // rounding would overflow; no device holds 2^62 bytes anyway
      ++stats.num_ooms;
      trace(TraceAction::Oom, nullptr, orig_size, stream);
      ANATOMY_THROW(OutOfMemoryError,
                    "caching allocator: out of memory. Tried to allocate {} bytes, more than {} "
                    "(device {} has a total capacity of {})",
                    orig_size, kMaxRequest, provider.device().str(), format_size(provider.total_memory()));
    }
    process_events();
    size_t size = rounded_size(orig_size);
    BlockPool& pool = pool_for(size, stream);
    FoundBlock found = conf.caching ? get_free_block(pool, size, stream) : FoundBlock{};
    if (found.block) return alloc_found_block(found.block, orig_size, size, found.in_free_set);
    return malloc_past_cache(orig_size, size, pool, stream);
  }

  // No cached block fits: reserve (or grow an expandable segment), down the OOM ladder if need
  // be. Out of line, so that the cached path above stays small enough for the compiler to keep
  // get_free_block inline in it.
  ANATOMY_NOINLINE Block* malloc_past_cache(size_t orig_size, size_t size, BlockPool& pool, StreamId stream) {
    const PoolInFlight in_flight(*this, pool);
    // With caching off every request is a reservation of its own, released when freed.
    // With expandable segments a segment grows by the request (rounded up to its pages).
    size_t alloc_size = conf.caching && !expandable_for(pool) ? allocation_size(size) : size;
    if (conf.garbage_collection_threshold > 0.0) garbage_collect_cached_blocks();
    release_cached_segments_before_new_peak(pool, alloc_size);
    FoundBlock found = alloc_block_or_cached(pool, size, alloc_size, stream, false);
    // A live private pool's free memory is never given back (a captured graph may use it), so
    // the first rung frees oversize blocks only for the ordinary pools.
    if (!found.block && !pool.private_pool && release_available_cached_blocks(pool, size, stream))
      found = alloc_block_or_cached(pool, size, alloc_size, stream, false);
    if (!found.block) {
      release_cached_blocks();
      found = alloc_block_or_cached(pool, size, alloc_size, stream, true);
    }
    if (!found.block) throw_oom(orig_size, size, alloc_size, stream, pool);
    return alloc_found_block(found.block, orig_size, size, found.in_free_set);
  }

  // The first route that takes the request sends it to its private pool's small or large pool;
  // with no route in force this costs one branch.
  BlockPool& pool_for(size_t size, StreamId stream) {
    if (ANATOMY_UNLIKELY(private_pools.routing())) {
      if (auto* pp = static_cast<PrivatePool*>(private_pools.route(stream))) {
        return size <= kSmallSize ? pp->small : pp->large;
      }
    }
    return size <= kSmallSize ? small : large;
  }

  // A cached block for a request. One that will be split stays in its pool's free set when its
  // remainder (the same Block, shrunk from the front) still sorts after the block before it:
  // alloc_found_block then shrinks it in place, saving an erase and an insert.
  struct FoundBlock {
    Block* block = nullptr;
    bool in_free_set = false;
  };

  ANATOMY_HOT_INLINE FoundBlock get_free_block(BlockPool& pool, size_t size, StreamId stream) {
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

  Block* alloc_block(BlockPool& pool, size_t alloc_size, StreamId stream, bool is_retry) {
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
  void* reserve_segment(size_t nbytes) {
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
  FoundBlock alloc_block_or_cached(BlockPool& pool, size_t size, size_t alloc_size, StreamId stream, bool is_retry) {
    const uint64_t unlocked_before = unlocked_reserves;
    if (Block* block = alloc_block(pool, alloc_size, stream, is_retry)) return {block, false};
    // The count moved only if this thread dropped the lock: no other thread runs while it holds it.
    if (unlocked_reserves == unlocked_before || !conf.caching) return {};
    return get_free_block(pool, size, stream);
  }

  // Keeps a private pool in existence while a request for it is past the cache (Note
  // [Reserving without the lock]); the ordinary pools need nothing. When the pool's last user
  // went meanwhile, it retires at the end as it would have then.
  class PoolInFlight {
   public:
    PoolInFlight(Impl& impl, BlockPool& pool) : impl_(impl), pp_(pool.private_pool) {
      if (pp_) ++pp_->requests_in_flight;
    }
    ~PoolInFlight() {
      if (pp_ && --pp_->requests_in_flight == 0 && pp_->stats.use_count == 0) impl_.retire_pool(*pp_);
    }
    PoolInFlight(const PoolInFlight&) = delete;
    PoolInFlight& operator=(const PoolInFlight&) = delete;

   private:
    Impl& impl_;
    PrivatePool* pp_;
  };

  bool should_split(const Block* block, size_t size) const {
    size_t remaining = block->size - size;
    // The rest of a block in an expandable segment is never stranded: it merges with what the
    // segment maps next, so any size worth a block is split off, in either pool.
    if (block->pool->is_small || block->expandable) return remaining >= kMinBlockSize;
    return size < conf.max_split_size && remaining > kSmallSize;
  }

  // `in_free_set`: get_free_block left the block in the free set, to be split in place.
  Block* alloc_found_block(Block* block, size_t orig_size, size_t size, bool in_free_set = false) {
    BlockPool& pool = *block->pool;
    const bool already_split = block->is_split();
    const bool split = should_split(block, size);
    ANATOMY_INTERNAL_ASSERT(split || !in_free_set,
                            "caching allocator: a cached block left in the free set is not split");
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

  // ---- freeing ----

  void free(Block* block) {
    allocated_blocks.erase(block->ptr);
    free_unlisted(block);
  }

  // free() of a block already taken out of allocated_blocks (raw_free looks it up and takes it
  // out in one probe).
  void free_unlisted(Block* block) {
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
    // Other streams may still be using it: reuse waits for an event on each (Note in
    // docs/allocator.md, "record_stream"); process_events() finishes the free later.
    for (StreamId s : block->stream_uses) {
      EventId e = provider.create_event();
      provider.record_event(e, s);
      ++block->event_count;
      outstanding_events[s].emplace_back(e, block);
    }
    block->stream_uses.clear();
  }

  // Returns the block to its pool, merged with free neighbours (`block` may be deleted then).
  void free_block(Block* block) {
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
  Block* merge_free_run(Block* block, Block* before, Block* after, BlockPool& pool) {
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
  void process_events() {
    for (auto it = outstanding_events.begin(); it != outstanding_events.end();) {
      auto& queue = it->second;
      while (!queue.empty() && provider.query_event(queue.front().first)) {
        finish_event(queue.front());
        queue.pop_front();
      }
      it = queue.empty() ? outstanding_events.erase(it) : std::next(it);
    }
  }

  void finish_event(std::pair<EventId, Block*> entry) {
    provider.destroy_event(entry.first);
    if (--entry.second->event_count == 0) free_block(entry.second);
  }

  void synchronize_and_free_events() {
    provider.synchronize();
    ++stats.num_sync_all_streams;
    for (auto& [stream, queue] : outstanding_events) {
      for (auto& entry : queue) finish_event(entry);
    }
    outstanding_events.clear();
  }

  void insert_into_blocks(Block* block) {
    block->gc_count_base = block->pool->get_free_block_calls;
    insert_keeping_age(block);
  }

  // Into its pool's free set, in a kept node when there is one.
  void insert_keeping_age(Block* block) {
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
  void erase_from_blocks(BlockPool& pool, Block* block) { keep_node(pool.blocks.extract(block)); }

  void keep_node(BlockSet::node_type node) {
    if (!node.empty() && spare_nodes.size() < kMaxSpare) spare_nodes.push_back(std::move(node));
  }

  double allowed_memory() const {
    return conf.per_process_memory_fraction * static_cast<double>(provider.total_memory());
  }

  // Would reserving `nbytes` more pass per_process_memory_fraction? Reservations other threads
  // are making without the lock count as made.
  bool exceeds_memory_fraction(size_t nbytes) const {
    return conf.per_process_memory_fraction < 1.0 &&
           static_cast<double>(total_reserved + reserving + nbytes) > allowed_memory();
  }

  // ---- releasing cache ----

  // garbage_collection_threshold: once reserved memory passes the threshold (a fraction of what
  // may be reserved), release whole cached large segments older than the average, oldest first
  // in effect, until back under it. Unlike the OOM path this never synchronizes.
  void garbage_collect_cached_blocks() {
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

  void release_block(Block* block) {
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
  bool release_available_cached_blocks(BlockPool& pool, size_t size, StreamId stream) {
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
  void release_cached_segments_before_new_peak(const BlockPool& pool, size_t alloc_size) {
    if (!conf.release_before_new_peak || !conf.caching || expandable_for(pool) || private_pools.routing()) return;
    if (total_reserved + reserving + alloc_size <= reserved_high_water) return;
    for (auto it = large.blocks.begin(); it != large.blocks.end();) {
      Block* b = *it++;
      if (!b->is_split() && b->size < conf.max_split_size) release_block(b);
    }
  }

  void add_reserved(size_t nbytes) {
    total_reserved += nbytes;
    reserved_high_water = std::max(reserved_high_water, total_reserved);
  }

  void release_blocks(BlockPool& pool) {
    for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
      Block* b = *it++;
      if (!b->is_split()) release_block(b);
    }
  }

  void release_cached_blocks() {
    synchronize_and_free_events();
    release_blocks(large);
    release_blocks(small);
    shrink_expandable_segments();
  }

  // ---- expandable segments (docs/allocator.md "Expandable segments") ----

  // Caching off means every request is a reservation of its own, whatever the knob says.
  bool use_expandable_segments() const { return conf.expandable_segments && conf.caching; }
  // Private pools keep plain segments (as PyTorch's do): a pool's segments change owner when the
  // pool dies, which a growing segment tied to its pool and stream cannot.
  bool expandable_for(const BlockPool& pool) const { return use_expandable_segments() && !pool.private_pool; }

  // Neither allocated nor waiting for events, and mapped: in its pool's free set (null: no block).
  static bool is_free(const Block* b) { return b != nullptr && !b->allocated && b->event_count == 0 && b->mapped; }
  // Free or unmapped: a place a request may take once its unmapped pages are mapped.
  static bool is_unused(const Block* b) { return b != nullptr && !b->allocated && b->event_count == 0; }

  // PyTorch's page sizes: 2 MiB for the small pool, 20 MiB for the large one, in whole provider
  // pages.
  size_t expandable_page_size(const BlockPool& pool) const {
    const size_t granularity = provider.page_size();
    const size_t want = pool.is_small ? kSmallBuffer : kLargeBuffer;
    return (want + granularity - 1) / granularity * granularity;
  }

  // No cached block fits `size` (rounded): the stream's segment of this pool (made on first use,
  // with room for the whole device) maps pages at its end, and the free block at the end grows
  // into them, or a new free block holds them. Returns that block, not in the pool, or nullptr
  // when the provider has no memory for the pages (nothing changed then).
  Block* grow_expandable_segment(BlockPool& pool, size_t size, StreamId stream) {
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
      auto made =
          std::make_unique<Expandable>(Expandable{std::move(fresh), &pool, stream, nullptr, {}, next_segment()});
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
  Block* map_holes(Expandable& es, size_t size) {
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

  // Runs a grow or shrink of `seg`, counting the provider's map and unmap calls it made.
  template <typename F>
  size_t counted(ExpandableSegment& seg, F&& f) {
    const int64_t maps = seg.maps(), unmaps = seg.unmaps();
    const size_t bytes = f();
    stats.num_provider_maps += seg.maps() - maps;
    stats.num_provider_unmaps += seg.unmaps() - unmaps;
    return bytes;
  }

  // Every expandable segment gives back the whole pages inside its free blocks: those in the
  // middle become unmapped blocks (holes), those at the end shrink the segment. Called with the
  // device synchronized (empty_cache, the OOM ladder's release step).
  void shrink_expandable_segments() {
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
  void shrink_expandable_segment(Expandable* es) {
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
  void unmap_inner_free_pages(Expandable& es) {
    for (Block* b = es.tail ? es.tail->prev : nullptr; b != nullptr;) {
      Block* before = b->prev;  // stays: only b and the holes after it can go
      if (is_free(b)) unmap_free_block(es, b);
      b = before;
    }
  }

  void unmap_free_block(Expandable& es, Block* block) {
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

  // Puts `b` into the block list of `at`'s segment, right before or after it; takes it out.
  static void link_before(Block* b, Block* at) {
    b->expandable = at->expandable;
    b->prev = at->prev;
    b->next = at;
    if (at->prev) at->prev->next = b;
    at->prev = b;
  }
  static void link_after(Block* b, Block* at) {
    b->expandable = at->expandable;
    b->next = at->next;
    b->prev = at;
    if (at->next) at->next->prev = b;
    at->next = b;
  }
  static void unlink(Block* b) {
    if (b->prev) b->prev->next = b->next;
    if (b->next) b->next->prev = b->prev;
  }

  // ---- private pools ----

  // A pool without users: no route can reach it again, so each of its segments that is wholly
  // free becomes an ordinary cached segment (reused by ordinary requests, released by empty_cache
  // and the OOM ladder). Once it holds no segment, the pool goes. Runs when the last user goes
  // and whenever one of its blocks is freed after that.
  void retire_pool(PrivatePool& pp) {
    for (BlockPool* from : {&pp.small, &pp.large}) {
      BlockPool& to = from->is_small ? small : large;
      std::vector<Block*> whole;
      for (Block* b : from->blocks) {
        if (!b->is_split()) whole.push_back(b);
      }
      for (Block* b : whole) {
        erase_from_blocks(*from, b);
        b->pool = &to;
        insert_into_blocks(b);
        --pp.stats.segments;
        pp.stats.reserved_bytes -= static_cast<int64_t>(b->size);
      }
    }
    if (pp.stats.segments == 0 && pp.requests_in_flight == 0) private_pools.erase(pp.stats.id);
  }

  void drop_use(PoolState& state) {
    if (--state.stats.use_count == 0) retire_pool(static_cast<PrivatePool&>(state));
  }

  // Every block is either free (in a pool) or active; a segment is reached from any of its blocks.
  std::vector<SegmentInfo> segments() const {
    std::set<Block*, std::less<>> heads;
    auto add_head = [&](Block* b) {
      while (b->prev) b = b->prev;
      heads.insert(b);
    };
    for (const BlockPool* p : {&small, &large}) {
      for (Block* b : p->blocks) add_head(b);
    }
    private_pools.for_each([&](const PoolState& state) {
      const auto& pp = static_cast<const PrivatePool&>(state);
      for (const BlockPool* p : {&pp.small, &pp.large}) {
        for (Block* b : p->blocks) add_head(b);
      }
    });
    for_each_active(add_head);
    std::vector<SegmentInfo> out;
    for (Block* head : heads) {
      SegmentInfo seg{head->ptr, 0, head->stream, head->pool->is_small, {}, head->expandable != nullptr, {}, 0};
      if (const PrivatePool* pp = head->pool->private_pool) seg.pool = pp->stats.id;
      for (Block* b = head; b; b = b->next) {
        (b->mapped ? seg.size : seg.unmapped_size) += b->size;
        const bool pending = !b->allocated && b->event_count > 0;
        seg.blocks.push_back({b->ptr, b->size, b->requested, b->allocated, pending,
                              b->allocated || pending ? b->op : nullptr, !b->mapped});
      }
      out.push_back(std::move(seg));
    }
    std::sort(out.begin(), out.end(),
              [](const SegmentInfo& a, const SegmentInfo& b) { return std::less<void*>()(a.address, b.address); });
    return out;
  }

  [[noreturn]] void throw_oom(size_t orig_size, size_t size, size_t alloc_size, StreamId stream,
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
};

namespace {

// The DataPtr's deleter: its context is the Block, so no lookup by pointer.
void free_block_of_data_ptr(void* ctx) {
  auto* block = static_cast<Block*>(ctx);
  CachingAllocator::Impl* impl = block->pool->owner;
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
  impl_->private_pools.for_each([&](PoolState& state) {
    auto& pp = static_cast<PrivatePool&>(state);
    impl_->release_blocks(pp.small);
    impl_->release_blocks(pp.large);
  });
  if (impl_->history.enabled()) op_name_hook::remove_listener();
  // What is left is in use by someone who will never free it through us; drop the bookkeeping
  // (the provider's memory stays with the provider, expandable segments' pages mapped).
  for (auto& [key, es] : impl_->expandable_segments) (void)es->segment.release();
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
  return impl_->stats;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->stats.for_each_array([](StatArray& a) {
    for (Stat& s : a.s) s.peak = s.current;
  });
}

std::vector<SegmentInfo> CachingAllocator::segments() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->segments();
}

void CachingAllocator::record_memory_history(bool enabled, size_t max_entries) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  const bool was = impl_->history.enabled();
  impl_->history.set(enabled, max_entries);
  // The dispatcher names operators only while some allocator records (core/op_name_hook.h).
  if (enabled && !was) op_name_hook::add_listener();
  if (!enabled && was) op_name_hook::remove_listener();
}

MemorySnapshot CachingAllocator::memory_snapshot() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return MemorySnapshot{impl_->device, impl_->segments(), impl_->history.entries(), impl_->history.max_entries(),
                        impl_->stats, {}};
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
  auto state = std::make_unique<PrivatePool>(impl_.get());
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->private_pools.create(std::move(state)).stats.id;
}

void CachingAllocator::retain_pool(PoolId pool) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  ++impl_->private_pools.live(pool, "retain_pool").stats.use_count;
}

void CachingAllocator::release_pool(PoolId pool) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->drop_use(impl_->private_pools.live(pool, "release_pool"));
}

void CachingAllocator::begin_allocate_to_pool(PoolId pool, StreamFilter filter) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->private_pools.begin_routing(pool, std::move(filter));
}

void CachingAllocator::end_allocate_to_pool(PoolId pool) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->drop_use(impl_->private_pools.end_routing(pool));
}

PoolStats CachingAllocator::pool_stats(PoolId pool) const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->private_pools.existing(pool, "pool_stats").stats;
}

std::vector<PoolStats> CachingAllocator::pools() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->private_pools.stats();
}

}  // namespace anatomy::alloc
