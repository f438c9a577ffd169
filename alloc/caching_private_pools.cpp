// The caching allocator's private pools, the part that touches blocks: a pool whose users have
// all gone retires, its wholly free segments joining the ordinary pools. Ids, use counts, routes
// and the checks of the calls that name a pool are in private_pool.h; the pool's own block pools
// (PrivatePool) in caching_allocator_impl.h. Called with the allocator's lock held.
#include <vector>

#include "anatomy/alloc/caching_block_pool.h"

namespace anatomy::alloc {

// A pool without users: no route can reach it again, so each of its segments that is wholly
// free becomes an ordinary cached segment (reused by ordinary requests, released by empty_cache
// and the OOM ladder). Once it holds no segment, the pool goes. Runs when the last user goes
// and whenever one of its blocks is freed after that.
void CachingAllocator::Impl::retire_pool(PrivatePool& pp) {
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

void CachingAllocator::Impl::drop_use(PoolState& state) {
  if (--state.stats.use_count == 0) retire_pool(static_cast<PrivatePool&>(state));
}

}  // namespace anatomy::alloc
