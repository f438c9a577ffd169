// MemorySnapshot: the caching allocator's state at one moment (every segment and its blocks) and
// its recent history (memory_history.h), as CachingAllocator::memory_snapshot() returns it (the
// backend:cudaMallocAsync allocator's has its live allocations instead of segments), and
// its JSON in the shape of PyTorch's torch.cuda.memory._snapshot(), so that people and tools who
// know that format can read it. snapshot_html.h draws it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/memory_history.h"
#include "anatomy/core/json_string.h"

namespace anatomy::alloc {

// A live allocation of an allocator whose segments are not visible (backend:cudaMallocAsync).
struct AllocationInfo {
  void* ptr;
  size_t size;  // what was asked for: that backend does not round
  StreamId stream;
  const char* op = nullptr;  // the operator that allocated it, while the history records
};

struct MemorySnapshot {
  Device device;
  std::vector<SegmentInfo> segments;  // in address order, each tiled by its blocks
  std::vector<TraceEntry> trace;      // oldest first; empty unless the history was recording
  size_t trace_max_entries = 0;       // the ring's size (0: not recording)
  MemoryStats stats;
  // backend:cudaMallocAsync, whose segments are the driver pool's and not visible (`segments` is
  // empty): the live allocations, in address order. The caching allocator leaves it empty (its
  // allocations are the allocated blocks of `segments`).
  std::vector<AllocationInfo> allocations;
};

// A block's state under PyTorch's names: "active_allocated" (handed out), "active_pending_free"
// (freed, waiting for the events of streams that used it) or "inactive" (free, cached); and
// anatomy's "unmapped": pages of an expandable segment given back to the device, which PyTorch's
// snapshot leaves out (it reports each mapped stretch of such a segment as a segment of its own).
std::string_view block_state(const BlockInfo& block);

// The snapshot as JSON:
//   {"segments": [{"device", "address", "total_size", "allocated_size", "active_size",
//                  "requested_size", "stream", "segment_type": "small" | "large", "is_expandable",
//                  "unmapped_size" (bytes of unmapped blocks; "total_size" counts mapped ones),
//                  "segment_pool_id": [0, private pool id, or 0 for the ordinary pools],
//                  "blocks": [{"address", "size", "requested_size", "state", "op"?, "frames"}]}],
//    "device_traces": [[{"action", "addr", "size", "stream", "time_us", "seq", "op"?, "frames"}]],
//    "trace_max_entries": N}
// with, when `allocations` is not empty, "allocations": [{"address", "size", "requested_size",
// "stream", "op"?, "frames"}] after "segments".
// device_traces is indexed by device index, as PyTorch's is; "frames" holds the operator as
// [{"name": op, "filename": "", "line": 0}] (anatomy records no Python stack), empty when unknown.
std::string to_json(const MemorySnapshot& snapshot);

// `text` as a JSON string literal, quotes included (core/json_string.h).
using anatomy::json_string;

}  // namespace anatomy::alloc
