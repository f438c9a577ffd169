// SegmentList: the caching allocator's segments and their blocks, as segments() and memory
// snapshots report them. The front adds every block it knows (the free ones of each pool and the
// active ones); a segment is reached from any of its blocks, and each is described once.
#pragma once

#include <functional>
#include <set>
#include <vector>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/caching_block.h"

namespace anatomy::alloc {

class SegmentList {
 public:
  // `block`'s segment is in the list.
  void add(Block* block) {
    while (block->prev) block = block->prev;
    heads_.insert(block);
  }
  // Every segment added, by address, its blocks in address order.
  std::vector<SegmentInfo> describe() const;

 private:
  std::set<Block*, std::less<>> heads_;  // each segment's first block
};

}  // namespace anatomy::alloc
