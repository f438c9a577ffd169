// ExpandableSegment: the address bookkeeping of one expandable segment (expandable_segments:True,
// docs/allocator.md "Expandable segments"). A range of addresses large enough for the whole
// device is reserved once; physical pages are mapped at the end of the part in use as the segment
// grows, and unmapped from that end as it shrinks. Pages inside the part in use can be unmapped
// too (the free pages in the middle of a segment, given back by empty_cache) and mapped again, so
// [base, mapped_end) is mapped but for such holes; the caching allocator's blocks tile it, holes
// included. Blocks themselves are the allocator's business (caching_expandable.cpp); this class
// only talks to the provider and knows which pages are mapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

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
  // The end of the part in use: every page below it is mapped, but for holes made by unmap().
  char* mapped_end() const { return base_ + end_; }
  // Bytes mapped now: mapped_end() - base() less the holes.
  size_t mapped_size() const { return mapped_; }
  size_t address_size() const { return address_size_; }
  size_t page_size() const { return page_size_; }
  // Pages mapped and unmapped so far (provider map() and unmap() calls that took effect; a
  // request that fails part-way counts the pages it mapped and unmapped again).
  int64_t maps() const { return maps_; }
  int64_t unmaps() const { return unmaps_; }

  // Maps whole pages after mapped_end() until at least `nbytes` more are mapped, one provider
  // map() per page (so that each can be unmapped on its own). All or nothing: returns the bytes
  // mapped, or 0 (having mapped nothing) when the provider runs out of memory or the range is full.
  size_t grow(size_t nbytes);
  // Unmaps every mapped page that lies entirely at or after `from` (inside the part in use), so
  // that mapped_end() becomes `from` rounded up to a page; holes there are passed over. Returns
  // the bytes unmapped.
  size_t shrink_to(const char* from);
  // Unmaps every page that lies entirely inside [ptr, ptr + nbytes), below mapped_end() and all
  // mapped. Returns the offset of the first such page from `ptr` and the bytes unmapped (0: no
  // whole page inside).
  struct Range {
    size_t offset = 0;
    size_t size = 0;
  };
  Range unmap(const char* ptr, size_t nbytes);
  // Maps the pages [ptr, ptr + nbytes), whole pages below mapped_end() that are all unmapped
  // (holes). All or nothing: false, having mapped nothing, when the provider runs out of memory.
  bool map(const char* ptr, size_t nbytes);

 private:
  ExpandableSegment(MemoryProvider& provider, char* base, size_t page_size, size_t address_size)
      : provider_(provider),
        base_(base),
        page_size_(page_size),
        address_size_(address_size),
        page_mapped_(address_size / page_size, false) {}
  // Maps pages [first, last) (indices, all unmapped), all or nothing.
  bool map_pages(size_t first, size_t last);
  // Unmaps the mapped pages among [first, last), last page first.
  void unmap_pages(size_t first, size_t last);
  size_t page_of(const char* ptr) const { return static_cast<size_t>(ptr - base_) / page_size_; }

  MemoryProvider& provider_;
  char* base_;
  size_t page_size_;
  size_t address_size_;
  bool released_ = false;
  size_t end_ = 0;     // a multiple of page_size_
  size_t mapped_ = 0;  // bytes of the mapped pages below end_
  std::vector<bool> page_mapped_;
  int64_t maps_ = 0;
  int64_t unmaps_ = 0;
};

}  // namespace anatomy::alloc
