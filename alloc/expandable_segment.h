// ExpandableSegment: the address bookkeeping of one expandable segment (expandable_segments:True,
// docs/allocator.md "Expandable segments"). A range of addresses large enough for the whole
// device is reserved once; physical pages are mapped at the end of what is mapped as the segment
// grows, and unmapped from the end as it shrinks, so the mapped part is always one prefix
// [base, base + mapped_size) in which the caching allocator's blocks lie contiguously. Blocks
// themselves are the allocator's business (caching_allocator.cpp); this class only talks to the
// provider.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "anatomy/alloc/memory_provider.h"

namespace anatomy::alloc {

class ExpandableSegment {
 public:
  // Reserves `address_size` bytes (rounded up to whole pages) for pages of `page_size` bytes, a
  // multiple of the provider's page_size(). Returns nullptr when the provider cannot reserve the
  // range.
  static std::unique_ptr<ExpandableSegment> create(MemoryProvider& provider, size_t page_size, size_t address_size);
  // Unmaps every page and gives the range back to the provider. Call it before destroying a
  // segment, so that a provider error is an exception; the destructor does it for a segment that
  // was not released, and then cannot report errors.
  void release_range();
  ~ExpandableSegment();
  ExpandableSegment(const ExpandableSegment&) = delete;
  ExpandableSegment& operator=(const ExpandableSegment&) = delete;

  char* base() const { return base_; }
  char* mapped_end() const { return base_ + mapped_; }
  size_t mapped_size() const { return mapped_; }
  size_t address_size() const { return address_size_; }
  size_t page_size() const { return page_size_; }
  // Pages mapped and unmapped so far (provider map() and unmap() calls that took effect; a
  // growth that fails part-way counts the pages it mapped and unmapped again).
  int64_t maps() const { return maps_; }
  int64_t unmaps() const { return unmaps_; }

  // Maps whole pages after mapped_end() until at least `nbytes` more are mapped, one provider
  // map() per page (so that each can be unmapped on its own). All or nothing: returns the bytes
  // mapped, or 0 (having mapped nothing) when the provider runs out of memory or the range is full.
  size_t grow(size_t nbytes);
  // Unmaps every mapped page that lies entirely at or after `from` (inside the mapped prefix), so
  // that the mapped end becomes `from` rounded up to a page. Returns the bytes unmapped.
  size_t shrink_to(const char* from);

 private:
  ExpandableSegment(MemoryProvider& provider, char* base, size_t page_size, size_t address_size)
      : provider_(provider), base_(base), page_size_(page_size), address_size_(address_size) {}
  void unmap_pages(size_t from_offset);

  MemoryProvider& provider_;
  char* base_;
  size_t page_size_;
  size_t address_size_;
  bool released_ = false;
  size_t mapped_ = 0;  // a multiple of page_size_
  int64_t maps_ = 0;
  int64_t unmaps_ = 0;
};

}  // namespace anatomy::alloc
