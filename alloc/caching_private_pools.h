// PrivatePoolSet: the caching allocator's private pools with their blocks (docs/allocator.md
// "Private pools"). Each pool (PrivatePool) has its own small and large BlockPool; the set keeps
// them by id with their users and routes (PrivatePools, private_pool.h, which knows no blocks),
// sends a routed request to its pool's BlockPool, and retires a pool whose users have all gone:
// its wholly free segments join the ordinary pools, and once it holds none it goes. The locked
// front (caching_allocator.cpp) owns the set and calls it under the allocator's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/caching_block_pool.h"
#include "anatomy/alloc/private_pool.h"
#include "anatomy/core/macros.h"

namespace anatomy::alloc {

// One private pool: its id, users and counters (PoolState) and its own block pools.
struct PrivatePool final : PoolState {
  BlockPool small, large;
  // Requests for it past the cache, which may drop the allocator's lock (Note [Reserving without
  // the lock]): the pool stays until they are done, even when its last user goes meanwhile.
  int requests_in_flight = 0;

  PrivatePool(SpareBlocks& spares, CachingAllocator::Impl* owner)
      : small(true, spares, owner, this), large(false, spares, owner, this) {}

  // A block of `bytes` handed out from one of its pools, or freed.
  void count_allocated(size_t bytes) {
    ++stats.allocations;
    stats.allocated_bytes += static_cast<int64_t>(bytes);
  }
  void count_freed(size_t bytes) {
    --stats.allocations;
    stats.allocated_bytes -= static_cast<int64_t>(bytes);
  }
};

class PrivatePoolSet {
 public:
  // `small` and `large`: the ordinary pools, where a retiring pool's free segments go. Each must
  // outlive the set.
  PrivatePoolSet(BlockPool& small, BlockPool& large, SpareBlocks& spares, CachingAllocator::Impl* owner)
      : small_(small), large_(large), spares_(spares), owner_(owner) {}
  PrivatePoolSet(const PrivatePoolSet&) = delete;
  PrivatePoolSet& operator=(const PrivatePoolSet&) = delete;

  // ---- routing ----

  // Is a route in force? One branch for an allocator without routes.
  bool routing() const { return pools_.routing(); }
  // The block pool of the first route that takes a request of `size` (rounded) bytes on `stream`:
  // its private pool's small or large one; nullptr when no route takes it.
  BlockPool* route(size_t size, StreamId stream) const {
    auto* pp = static_cast<PrivatePool*>(pools_.route(stream));
    if (pp == nullptr) return nullptr;
    return size <= kSmallSize ? &pp->small : &pp->large;
  }

  // ---- the calls naming a pool (CachingAllocator's; each throws ValueError as it says) ----

  // A pool to add(), made without the lock.
  std::unique_ptr<PrivatePool> make() const { return std::make_unique<PrivatePool>(spares_, owner_); }
  PoolId add(std::unique_ptr<PrivatePool> pool) { return pools_.create(std::move(pool)).stats.id; }
  void retain(PoolId id) { ++pools_.live(id, "retain_pool").stats.use_count; }
  void release(PoolId id) { drop_use(pools_.live(id, "release_pool")); }
  void begin_routing(PoolId id, StreamFilter filter) { pools_.begin_routing(id, std::move(filter)); }
  void end_routing(PoolId id) { drop_use(pools_.end_routing(id)); }
  PoolStats stats(PoolId id) const { return pools_.existing(id, "pool_stats").stats; }
  std::vector<PoolStats> all_stats() const { return pools_.stats(); }
  // Bytes reserved by every private pool.
  size_t reserved_bytes() const { return static_cast<size_t>(pools_.reserved_bytes()); }

  // ---- blocks ----

  // A block of the private pool `pp` (null: of the ordinary pools) was freed: a pool without
  // users retires again, as its free segments may have grown.
  void freed_into(PrivatePool* pp) {
    if (ANATOMY_UNLIKELY(pp != nullptr) && pp->stats.use_count == 0) retire(*pp);
  }
  // `f(BlockPool&)` on the block pools of every existing private pool.
  template <typename F>
  void for_each_block_pool(F&& f) {
    pools_.for_each([&](PoolState& state) {
      auto& pp = static_cast<PrivatePool&>(state);
      f(pp.small);
      f(pp.large);
    });
  }
  template <typename F>
  void for_each_block_pool(F&& f) const {
    pools_.for_each([&](const PoolState& state) {
      const auto& pp = static_cast<const PrivatePool&>(state);
      f(pp.small);
      f(pp.large);
    });
  }

  // Keeps the private pool of `pool` (if it is one) in existence while a request for it is past
  // the cache (Note [Reserving without the lock]); the ordinary pools need nothing. When the
  // pool's last user went meanwhile, it retires at the end as it would have then.
  class InFlight {
   public:
    InFlight(PrivatePoolSet& set, const BlockPool& pool) : set_(set), pp_(pool.private_pool()) {
      if (pp_) ++pp_->requests_in_flight;
    }
    ~InFlight() {
      if (pp_ && --pp_->requests_in_flight == 0 && pp_->stats.use_count == 0) set_.retire(*pp_);
    }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

   private:
    PrivatePoolSet& set_;
    PrivatePool* pp_;
  };

 private:
  void retire(PrivatePool& pp);
  void drop_use(PoolState& state);

  PrivatePools pools_;
  BlockPool& small_;
  BlockPool& large_;
  SpareBlocks& spares_;
  CachingAllocator::Impl* owner_;
};

}  // namespace anatomy::alloc
