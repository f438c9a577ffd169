// ExpandableSegment (see expandable_segment.h): a reserved range whose part in use grows and
// shrinks a page at a time at its end, and whose pages inside can be unmapped and mapped again.
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
  unmap_pages(0, end_ / page_size_);
  end_ = 0;
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
  if (bytes == 0 || bytes > address_size_ - end_) return 0;
  if (!map_pages(end_ / page_size_, (end_ + bytes) / page_size_)) return 0;
  end_ += bytes;
  return bytes;
}

size_t ExpandableSegment::shrink_to(const char* from) {
  ANATOMY_INTERNAL_ASSERT(from >= base_ && from <= mapped_end(),
                          "expandable segment: shrink_to outside the part in use");
  const size_t offset = static_cast<size_t>(from - base_);
  const size_t keep = (offset + page_size_ - 1) / page_size_ * page_size_;
  if (keep >= end_) return 0;
  const size_t before = mapped_;
  unmap_pages(keep / page_size_, end_ / page_size_);
  end_ = keep;
  return before - mapped_;
}

ExpandableSegment::Range ExpandableSegment::unmap(const char* ptr, size_t nbytes) {
  ANATOMY_INTERNAL_ASSERT(ptr >= base_ && ptr + nbytes <= mapped_end(),
                          "expandable segment: unmap outside the part in use");
  const size_t begin = static_cast<size_t>(ptr - base_);
  const size_t first = (begin + page_size_ - 1) / page_size_;
  const size_t last = (begin + nbytes) / page_size_;
  if (first >= last) return {};
  for (size_t i = first; i < last; ++i) {
    ANATOMY_INTERNAL_ASSERT(page_mapped_[i], "expandable segment: unmap of a page that is not mapped");
  }
  unmap_pages(first, last);
  return {first * page_size_ - begin, (last - first) * page_size_};
}

bool ExpandableSegment::map(const char* ptr, size_t nbytes) {
  const size_t begin = static_cast<size_t>(ptr - base_);
  ANATOMY_INTERNAL_ASSERT(
      ptr >= base_ && begin % page_size_ == 0 && nbytes % page_size_ == 0 && nbytes > 0 && begin + nbytes <= end_,
      "expandable segment: map of {} bytes at offset {}: not whole pages in use", nbytes, begin);
  return map_pages(begin / page_size_, (begin + nbytes) / page_size_);
}

bool ExpandableSegment::map_pages(size_t first, size_t last) {
  for (size_t i = first; i < last; ++i) {
    ANATOMY_INTERNAL_ASSERT(!page_mapped_[i], "expandable segment: map of a page that is mapped");
    if (!provider_.map(base_ + i * page_size_, page_size_)) {
      unmap_pages(first, i);  // all or nothing: a failed request leaves the segment as it was
      return false;
    }
    page_mapped_[i] = true;
    mapped_ += page_size_;
    ++maps_;
  }
  return true;
}

void ExpandableSegment::unmap_pages(size_t first, size_t last) {
  for (size_t i = last; i-- > first;) {
    if (!page_mapped_[i]) continue;
    provider_.unmap(base_ + i * page_size_, page_size_);
    page_mapped_[i] = false;
    mapped_ -= page_size_;
    ++unmaps_;
  }
}

}  // namespace anatomy::alloc
