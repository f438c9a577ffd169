// A picture of a MemorySnapshot for people: an SVG drawing each segment as a bar of its blocks,
// coloured by state and sized in proportion, with a hover title per block (address, size,
// request, state, operator); and a self-contained HTML page (no network) holding that SVG, the
// headline numbers and a table of the last recorded events. `gpu-anatomy memory-snapshot` writes
// both; docs/allocator.md shows one.
#pragma once

#include <cstddef>
#include <string>

#include "anatomy/alloc/memory_snapshot.h"

namespace anatomy::alloc {

std::string snapshot_to_svg(const MemorySnapshot& snapshot);
// The page, with at most `max_events` of the newest recorded events in its table.
std::string snapshot_to_html(const MemorySnapshot& snapshot, size_t max_events = 200);

}  // namespace anatomy::alloc
