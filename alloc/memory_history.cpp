// The memory history's ring buffer (see memory_history.h).
#include "anatomy/alloc/memory_history.h"

#include <chrono>

#include "anatomy/core/error.h"
#include "anatomy/core/op_name_hook.h"

namespace anatomy::alloc {

std::string_view to_string(TraceAction action) {
  switch (action) {
    case TraceAction::Alloc:
      return "alloc";
    case TraceAction::FreeRequested:
      return "free_requested";
    case TraceAction::FreeCompleted:
      return "free_completed";
    case TraceAction::SegmentAlloc:
      return "segment_alloc";
    case TraceAction::SegmentFree:
      return "segment_free";
    case TraceAction::SegmentMap:
      return "segment_map";
    case TraceAction::SegmentUnmap:
      return "segment_unmap";
    case TraceAction::Oom:
      return "oom";
  }
  return "unknown";
}

void MemoryHistory::set(bool enabled, size_t max_entries) {
  ANATOMY_CHECK(!enabled || max_entries > 0, ValueError,
                "record_memory_history: max_entries must be positive when enabling, got {}", max_entries);
  std::vector<TraceEntry>().swap(ring_);  // release the old buffer's memory too
  if (enabled) ring_.reserve(max_entries);
  enabled_ = enabled;
  max_entries_ = enabled ? max_entries : 0;
  next_ = 0;
  seq_ = 0;
}

void MemoryHistory::record(TraceAction action, const void* address, size_t size, StreamId stream) {
  const int64_t now =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  TraceEntry e{action, reinterpret_cast<uintptr_t>(address), size, stream, seq_++, now, op_name_hook::current()};
  if (ring_.size() < max_entries_) {
    ring_.push_back(e);
  } else {
    ring_[next_] = e;
    next_ = (next_ + 1) % ring_.size();
  }
}

std::vector<TraceEntry> MemoryHistory::entries() const {
  std::vector<TraceEntry> out;
  out.reserve(ring_.size());
  for (size_t i = 0; i < ring_.size(); ++i) out.push_back(ring_[(next_ + i) % ring_.size()]);
  return out;
}

}  // namespace anatomy::alloc
