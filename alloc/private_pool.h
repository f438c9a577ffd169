// Private memory pools of the caching allocator, the part that does not touch blocks: pool ids,
// use counts and counters, the routes that send allocations to a pool, and the checks of every
// call that names a pool. As PyTorch's MempoolId_t, PrivatePool::use_count and captures_underway;
// the blocks of each pool (its own small and large block pools) are PrivatePool's, in
// caching_private_pools.h, the RAII handles in mem_pool.h, the rules in docs/allocator.md
// "Private pools".
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "anatomy/alloc/memory_provider.h"

namespace anatomy::alloc {

// A private pool of one allocator, by number. The default value (0) names no private pool: the
// allocator's ordinary pools.
struct PoolId {
  uint64_t value = 0;
  bool is_default() const { return value == 0; }
  auto operator<=>(const PoolId&) const = default;
};

// Decides per allocation, from the stream it is for, whether a route takes it. It runs under the
// allocator's lock on the allocating thread, so it must be quick and must not call the allocator.
using StreamFilter = std::function<bool(StreamId)>;

// The calling thread's allocations on `stream`: the filter remembers the thread that made it.
StreamFilter current_thread_on_stream(StreamId stream);
// Every allocation of the calling thread, on any stream (what torch.cuda.use_mem_pool routes).
StreamFilter current_thread();

struct PoolStats {
  PoolId id;
  int64_t use_count = 0;        // handles, sharing callers, and a route in force
  bool routing = false;         // a route sends allocations to it now
  int64_t segments = 0;         // provider reservations it holds
  int64_t reserved_bytes = 0;   // their bytes
  int64_t allocations = 0;      // its blocks handed out
  int64_t allocated_bytes = 0;  // their (rounded) bytes
};

// What the allocator keeps of one pool besides its blocks (PrivatePool, in caching_private_pools.h,
// derives from it to add the block pools).
struct PoolState {
  PoolStats stats;
  virtual ~PoolState() = default;
};

// Every private pool of one allocator that still exists, and the routes in force. A pool exists
// from create() until erase(): the allocator erases it once it has no users and holds no segment.
// Not locked: the allocator calls it under its own lock.
class PrivatePools {
 public:
  // Takes `state`, gives it the next id and one user (the caller), and returns it.
  PoolState& create(std::unique_ptr<PoolState> state);
  // The pool `id` while it has users: retaining, routing to or releasing a pool needs one. An id
  // never handed out, or one whose users have all gone, is a ValueError naming `call` and the id.
  PoolState& live(PoolId id, std::string_view call);
  // The pool `id` while it exists, users or not (its blocks may still be allocated).
  const PoolState& existing(PoolId id, std::string_view call) const;
  void erase(PoolId id);

  // Routes the allocations `filter` accepts to the live pool `id`, which gains a user until
  // end_routing. A pool has one route at a time: a second begin is a ValueError.
  void begin_routing(PoolId id, StreamFilter filter);
  // Ends the route to `id` (a ValueError when there is none) and returns the pool. The route's use
  // is the caller's to drop: the last use going retires the pool, which needs its blocks.
  PoolState& end_routing(PoolId id);
  // The pool of the first route (in the order they began) whose filter accepts `stream`, or
  // nullptr. The caller checks routing() first, so an allocator with no route pays one branch.
  PoolState* route(StreamId stream) const;
  bool routing() const { return !routes_.empty(); }

  // Every existing pool, by id.
  std::vector<PoolStats> stats() const;
  template <typename F>
  void for_each(F&& f) {
    for (auto& [id, state] : pools_) f(*state);
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& [id, state] : pools_) f(std::as_const(*state));
  }
  // Reserved bytes of all private pools (the OOM message's "held by private pools").
  int64_t reserved_bytes() const;

 private:
  // The pool `id` while it exists; the errors of existing() and live() otherwise.
  PoolState* checked(PoolId id, std::string_view call) const;

  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<PoolState>> pools_;
  std::vector<std::pair<PoolState*, StreamFilter>> routes_;
};

}  // namespace anatomy::alloc
