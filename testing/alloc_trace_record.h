// Allocation traces recorded from a real run: a caching allocator's memory history
// (alloc/memory_history.h) turned into the AllocTrace of testing/alloc_trace.h, so that what a
// workload really asked for (testing/transformer_step.h's training, on CUDA) replays through any
// allocator, PyTorch's included (bench/peer/alloc_trace.cpp).
//
// Each "alloc" event starts an allocation (the next id, the size the caller asked for); each
// "free_requested" event frees the live allocation at its address (the caller's free, not the
// moment the block became reusable: a replay on one stream has no record_stream). Addresses are
// reused by the allocator, ids never. The trace keeps no streams: it replays on one.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/memory_history.h"
#include "anatomy/testing/alloc_trace.h"

namespace anatomy::testing {

struct RecordedTrace {
  AllocTrace trace;
  size_t events = 0;         // history entries read (every action, segments' included)
  size_t earlier_frees = 0;  // frees of blocks allocated before recording began: left out
  size_t closed = 0;         // blocks still allocated when recording stopped: freed at the trace's end
};

// The allocations and frees of `entries` (oldest first, as MemoryHistory::entries()), balanced:
// blocks still live at the end are freed there, in allocation order; a free of an address that
// is not live belongs to a block allocated before recording began and is left out (counted in
// earlier_frees). Throws ValueError when the history lost events (its first entry's seq is not 0:
// the ring was too small, so the trace would miss allocations and frees) or skips one, and when
// an allocation starts at an address that is still live.
RecordedTrace trace_from_history(const std::vector<alloc::TraceEntry>& entries);

// Records what `run` allocates and frees on `allocator`: turns the history on with room for
// `max_entries` events (dropping whatever it held), calls `run`, reads the events and turns the
// history off (also when `run` throws). Throws as trace_from_history, so a ring too small for the
// run fails loudly rather than giving a partial trace.
RecordedTrace record_trace(alloc::CachingAllocator& allocator, size_t max_entries, const std::function<void()>& run);

// A trace as text, to carry a recorded one off the machine that recorded it: the line
// "anatomy-alloc-trace 1", then one line per event, "a ID SIZE" or "f ID". write_trace throws
// ValueError when the file cannot be written; read_trace when it cannot be read or a line is not
// one of those (naming the line).
void write_trace(const std::string& path, const AllocTrace& trace);
AllocTrace read_trace(const std::string& path);

}  // namespace anatomy::testing
