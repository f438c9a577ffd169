// The snapshot's JSON (see memory_snapshot.h), written by hand: the library has no JSON
// dependency, and the format is small. Addresses are integers, as in PyTorch's snapshots.
#include "anatomy/alloc/memory_snapshot.h"

#include <fmt/format.h>

#include "anatomy/core/json_string.h"

namespace anatomy::alloc {

std::string_view block_state(const BlockInfo& block) {
  if (block.unmapped) return "unmapped";
  if (block.allocated) return "active_allocated";
  if (block.pending_free) return "active_pending_free";
  return "inactive";
}

namespace {

// "op" and "frames" for an operator name that may be unknown.
std::string op_fields(const char* op) {
  if (op == nullptr) return "\"frames\": []";
  std::string name = json_string(op);
  return fmt::format("\"op\": {}, \"frames\": [{{\"name\": {}, \"filename\": \"\", \"line\": 0}}]", name, name);
}

std::string segment_json(const SegmentInfo& seg, int device) {
  size_t allocated = 0, active = 0, requested = 0;
  std::string blocks;
  for (const BlockInfo& b : seg.blocks) {
    if (b.allocated) allocated += b.size;
    if (b.allocated || b.pending_free) {
      active += b.size;
      requested += b.requested;
    }
    blocks += fmt::format("{}\n      {{\"address\": {}, \"size\": {}, \"requested_size\": {}, \"state\": \"{}\", {}}}",
                          blocks.empty() ? "" : ",", reinterpret_cast<uintptr_t>(b.ptr), b.size,
                          b.allocated || b.pending_free ? b.requested : 0, block_state(b),
                          op_fields(b.allocated || b.pending_free ? b.op : nullptr));
  }
  return fmt::format(
      "    {{\"device\": {}, \"address\": {}, \"total_size\": {}, \"allocated_size\": {}, \"active_size\": {}, "
      "\"requested_size\": {}, \"stream\": {}, \"segment_type\": \"{}\", \"is_expandable\": {}, "
      "\"unmapped_size\": {}, \"segment_pool_id\": [0, {}], \"blocks\": [{}\n    ]}}",
      device, reinterpret_cast<uintptr_t>(seg.address), seg.size, allocated, active, requested, seg.stream,
      seg.is_small ? "small" : "large", seg.is_expandable, seg.unmapped_size, seg.pool.value, blocks);
}

std::string allocation_json(const AllocationInfo& a) {
  return fmt::format("    {{\"address\": {}, \"size\": {}, \"requested_size\": {}, \"stream\": {}, {}}}",
                     reinterpret_cast<uintptr_t>(a.ptr), a.size, a.size, a.stream, op_fields(a.op));
}

std::string trace_json(const TraceEntry& e) {
  return fmt::format(
      "      {{\"action\": \"{}\", \"addr\": {}, \"size\": {}, \"stream\": {}, \"time_us\": {}, \"seq\": {}, {}}}",
      to_string(e.action), e.address, e.size, e.stream, e.time_us, e.seq, op_fields(e.op));
}

}  // namespace

std::string to_json(const MemorySnapshot& s) {
  const int device = s.device.index() < 0 ? 0 : s.device.index();
  std::string out = "{\n  \"segments\": [";
  for (size_t i = 0; i < s.segments.size(); ++i) out += (i ? ",\n" : "\n") + segment_json(s.segments[i], device);
  out += s.segments.empty() ? "],\n" : "\n  ],\n";
  if (!s.allocations.empty()) {
    out += "  \"allocations\": [";
    for (size_t i = 0; i < s.allocations.size(); ++i) out += (i ? ",\n" : "\n") + allocation_json(s.allocations[i]);
    out += "\n  ],\n";
  }
  out += "  \"device_traces\": [";
  for (int d = 0; d < device; ++d) out += "[], ";  // other devices' traces: not this allocator's
  out += "[";
  for (size_t i = 0; i < s.trace.size(); ++i) out += (i ? ",\n" : "\n") + trace_json(s.trace[i]);
  out += s.trace.empty() ? "]],\n" : "\n    ]],\n";
  out += fmt::format("  \"trace_max_entries\": {}\n}}\n", s.trace_max_entries);
  return out;
}

}  // namespace anatomy::alloc
