// SegmentList (caching_segment_list.h): describing the segments found.
#include "anatomy/alloc/caching_segment_list.h"

#include <algorithm>
#include <utility>

#include "anatomy/alloc/caching_private_pools.h"

namespace anatomy::alloc {

std::vector<SegmentInfo> SegmentList::describe() const {
  std::vector<SegmentInfo> out;
  for (Block* head : heads_) {
    SegmentInfo seg{head->ptr, 0, head->stream, head->pool->is_small(), {}, head->expandable != nullptr, {}, 0};
    if (const PrivatePool* pp = head->pool->private_pool()) seg.pool = pp->stats.id;
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
