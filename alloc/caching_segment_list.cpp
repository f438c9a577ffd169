// The caching allocator's segments and their blocks as segments() and memory snapshots report
// them. Called with the allocator's lock held.
#include <algorithm>
#include <functional>
#include <set>
#include <vector>

#include "anatomy/alloc/caching_allocator_impl.h"

namespace anatomy::alloc {

// Every block is either free (in a pool) or active; a segment is reached from any of its blocks.
std::vector<SegmentInfo> CachingAllocator::Impl::segments() const {
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

}  // namespace anatomy::alloc
