// PrivatePoolSet (caching_private_pools.h): retiring a pool whose users have all gone.
#include "anatomy/alloc/caching_private_pools.h"

#include <vector>

namespace anatomy::alloc {

// A pool without users: no route can reach it again, so each of its segments that is wholly
// free becomes an ordinary cached segment (reused by ordinary requests, released by empty_cache
// and the OOM ladder). Once it holds no segment, the pool goes. Runs when the last user goes
// and whenever one of its blocks is freed after that.
void PrivatePoolSet::retire(PrivatePool& pp) {
  for (BlockPool* from : {&pp.small, &pp.large}) {
    BlockPool& to = from->is_small() ? small_ : large_;
    std::vector<Block*> whole;
    for (Block* b : from->free_blocks()) {
      if (!b->is_split()) whole.push_back(b);
    }
    for (Block* b : whole) {
      from->hand_over(b, to);
      --pp.stats.segments;
      pp.stats.reserved_bytes -= static_cast<int64_t>(b->size);
    }
  }
  if (pp.stats.segments == 0 && pp.requests_in_flight == 0) pools_.erase(pp.stats.id);
}

void PrivatePoolSet::drop_use(PoolState& state) {
  if (--state.stats.use_count == 0) retire(static_cast<PrivatePool&>(state));
}

}  // namespace anatomy::alloc
