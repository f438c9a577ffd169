// MemoryHistory: the caching allocator's record of what happened, a ring buffer of the last N
// events (allocations, frees, segment reservations and releases, out-of-memory errors), each
// with the operator that was running when the dispatcher knows it. PyTorch's
// torch.cuda.memory._record_memory_history() keeps the same events under the same names.
//
// Off by default; when off the allocator pays one predictable branch per event. Not thread-safe
// by itself: the allocator's mutex guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "anatomy/alloc/memory_provider.h"

namespace anatomy::alloc {

enum class TraceAction : uint8_t {
  Alloc,          // a block handed out (size: what the caller asked for)
  FreeRequested,  // the caller gave it back (size: what it had asked for)
  FreeCompleted,  // the block is reusable: at once, or once record_stream's events completed
  SegmentAlloc,   // a segment reserved from the provider (cudaMalloc)
  SegmentFree,    // a segment given back (cudaFree)
  SegmentMap,     // pages mapped at the end of an expandable segment (address and size: theirs)
  SegmentUnmap,   // pages unmapped from the end of an expandable segment
  Oom,            // an OutOfMemoryError (address 0, size: the request)
};
// PyTorch's names: "alloc", "free_requested", "free_completed", "segment_alloc", "segment_map", ...
std::string_view to_string(TraceAction action);

struct TraceEntry {
  TraceAction action;
  uintptr_t address;
  size_t size;
  StreamId stream;
  uint64_t seq;     // 0, 1, 2, ... since recording was turned on: gaps never happen, so the first
                    // entry's seq says how many older events the ring dropped
  int64_t time_us;  // steady clock, microseconds
  const char* op;   // the operator that was running (core/op_name_hook.h), or nullptr
};

class MemoryHistory {
 public:
  // Turns recording on, keeping at most `max_entries` (> 0) events, or off. Either way the events
  // so far are dropped.
  void set(bool enabled, size_t max_entries);
  bool enabled() const { return enabled_; }
  size_t max_entries() const { return max_entries_; }
  // Stamps the event with the next seq, the time and the current operator.
  void record(TraceAction action, const void* address, size_t size, StreamId stream);
  // The events kept, oldest first.
  std::vector<TraceEntry> entries() const;

 private:
  bool enabled_ = false;
  size_t max_entries_ = 0;
  std::vector<TraceEntry> ring_;  // grows to max_entries_, then wraps at next_
  size_t next_ = 0;
  uint64_t seq_ = 0;
};

}  // namespace anatomy::alloc
