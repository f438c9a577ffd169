// MemoryProvider: the few device services the caching allocator needs (reserve and release device
// memory, virtual memory for expandable segments, events on streams, capacity), so that the
// allocator's policy is written once and runs unchanged over a simulated device in unit tests and
// over CUDA on a GPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "anatomy/core/device.h"

namespace anatomy::alloc {

// A stream of the provider's device, by number. 0 is the device's default stream.
using StreamId = int64_t;
// An event handle the provider hands out; meaningful only to the provider that created it.
using EventId = uint64_t;

class MemoryProvider {
 public:
  virtual ~MemoryProvider() = default;

  // The device whose memory this is (what DataPtrs from the allocator report).
  virtual Device device() const = 0;

  // Reserves `nbytes` bytes of device memory, aligned to at least 512 bytes. Returns nullptr when
  // the device is out of memory (as cudaMalloc returns cudaErrorMemoryAllocation): the allocator
  // then frees cache and retries, so running out is not an exception at this level.
  virtual void* reserve(size_t nbytes) = 0;
  // Gives back memory from reserve(); `nbytes` is what was reserved.
  virtual void release(void* ptr, size_t nbytes) = 0;

  // Virtual memory, for expandable segments (alloc/expandable_segment.h): a range of addresses
  // is reserved with nothing behind it, and physical pages are mapped into it and unmapped again.
  // A provider that cannot do this keeps the defaults: supports_virtual_memory() is false, the
  // allocator then refuses expandable_segments:True, and the other calls are never made.
  virtual bool supports_virtual_memory() const { return false; }
  // The granularity of map() and unmap(): every address and size passed to them is a multiple.
  virtual size_t page_size() const { return 0; }
  // Reserves `nbytes` (a multiple of page_size()) of addresses aligned to page_size(), with no
  // memory behind them. Returns nullptr when the address space is exhausted.
  virtual void* reserve_address(size_t nbytes);
  // Gives back a range from reserve_address() once nothing in it is mapped.
  virtual void release_address(void* ptr, size_t nbytes);
  // Backs [ptr, ptr + nbytes), unmapped so far and inside a reserved range, with device memory
  // readable and writable by the device. Returns false, mapping nothing, when the device is out
  // of memory (as reserve() returns nullptr).
  virtual bool map(void* ptr, size_t nbytes);
  // Takes the memory behind exactly one earlier map() range away. The provider makes sure no
  // work queued before still uses it (as cudaFree does), since the allocator unmaps freed blocks
  // without waiting for their stream.
  virtual void unmap(void* ptr, size_t nbytes);

  // Events order a free behind work queued on other streams (record_stream): the allocator
  // records one on each such stream and reuses the block only once every one has completed.
  virtual EventId create_event() = 0;
  virtual void record_event(EventId event, StreamId stream) = 0;
  // True once all work queued on the event's stream before it was recorded has finished. Never
  // blocks.
  virtual bool query_event(EventId event) = 0;
  virtual void destroy_event(EventId event) = 0;
  // Waits for all work on every stream of the device; the allocator calls it only on its
  // out-of-memory path and in empty_cache(), where blocking is acceptable.
  virtual void synchronize() = 0;

  // The stream this thread's work goes to; Allocator::allocate(nbytes) allocates on it.
  virtual StreamId current_stream() const = 0;

  virtual size_t total_memory() const = 0;
  virtual size_t free_memory() const = 0;
};

}  // namespace anatomy::alloc
