// ExpandableSegment (see expandable_segment.h): a reserved range whose mapped prefix grows and
// shrinks a page at a time.
#include "anatomy/alloc/expandable_segment.h"

#include <algorithm>

#include "anatomy/core/error.h"

namespace anatomy::alloc {

std::unique_ptr<ExpandableSegment> ExpandableSegment::create(MemoryProvider& provider, size_t page_size,
                                                             size_t address_size) {
  const size_t granularity = provider.page_size();
  ANATOMY_INTERNAL_ASSERT(granularity > 0 && page_size > 0 && page_size % granularity == 0,
                          "expandable segment: page size {} is not a multiple of the provider's {}", page_size,
                          granularity);
  const size_t pages = (address_size + page_size - 1) / page_size;
  const size_t rounded = std::max<size_t>(pages, 1) * page_size;
  void* base = provider.reserve_address(rounded);
  if (base == nullptr) return nullptr;
  return std::unique_ptr<ExpandableSegment>(
      new ExpandableSegment(provider, static_cast<char*>(base), page_size, rounded));
}

void ExpandableSegment::release_range() {
  if (released_) return;
  unmap_pages(0);
  provider_.release_address(base_, address_size_);
  released_ = true;
}

ExpandableSegment::~ExpandableSegment() {
  try {
    release_range();
  } catch (...) {  // a destructor must not throw; the range stays reserved
  }
}

size_t ExpandableSegment::grow(size_t nbytes) {
  const size_t bytes = (nbytes + page_size_ - 1) / page_size_ * page_size_;
  if (bytes == 0 || bytes > address_size_ - mapped_) return 0;
  const size_t start = mapped_;
  for (size_t offset = start; offset < start + bytes; offset += page_size_) {
    if (!provider_.map(base_ + offset, page_size_)) {
      unmap_pages(start);  // all or nothing: a failed request leaves the segment as it was
      return 0;
    }
    ++maps_;
    mapped_ = offset + page_size_;
  }
  return bytes;
}

size_t ExpandableSegment::shrink_to(const char* from) {
  ANATOMY_INTERNAL_ASSERT(from >= base_ && from <= mapped_end(),
                          "expandable segment: shrink_to outside the mapped part");
  const size_t offset = static_cast<size_t>(from - base_);
  const size_t keep = (offset + page_size_ - 1) / page_size_ * page_size_;
  if (keep >= mapped_) return 0;
  const size_t before = mapped_;
  unmap_pages(keep);
  return before - keep;
}

// Unmaps the pages from `from_offset` (a page multiple) to the mapped end, last page first.
void ExpandableSegment::unmap_pages(size_t from_offset) {
  while (mapped_ > from_offset) {
    mapped_ -= page_size_;
    provider_.unmap(base_ + mapped_, page_size_);
    ++unmaps_;
  }
}

}  // namespace anatomy::alloc
