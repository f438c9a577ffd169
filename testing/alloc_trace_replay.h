// The allocation traces of testing/alloc_trace.h replayed through the engine's caching allocator,
// with the peaks of that replay: the fragmentation figure (peak reserved / peak allocated) that
// tests/alloc/test_alloc_trace.cpp bounds on the simulated device and bench/peer/alloc_trace.cpp
// sets beside PyTorch's. It reaches the allocator's internals (alloc/caching_allocator.h), so a
// file that includes it tests or measures the allocator itself (scripts/include-exceptions.txt).
#pragma once

#include <cstdint>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/testing/alloc_trace.h"

namespace anatomy::testing {

struct FragmentationFigures {
  int64_t peak_reserved = 0;   // bytes held from the device at the worst moment
  int64_t peak_allocated = 0;  // bytes of the blocks handed out (rounded sizes) at their most
  int64_t peak_requested = 0;  // bytes asked for, at their most
  double reserved_over_allocated() const {
    return peak_allocated > 0 ? static_cast<double>(peak_reserved) / static_cast<double>(peak_allocated) : 0.0;
  }
};

// The trace replayed on `stream` from an empty cache, with the peaks of that replay alone. `a` may
// hold live blocks of others: they count in both peaks, as they would in PyTorch's.
inline FragmentationFigures replay_fragmentation(const AllocTrace& trace, alloc::CachingAllocator& a,
                                                 alloc::StreamId stream = 0) {
  a.empty_cache();
  a.reset_peak_stats();
  replay(
      trace, [&](size_t n) { return a.raw_alloc(n, stream); }, [&](void* p) { a.raw_free(p); });
  const alloc::MemoryStats s = a.stats();
  return {s.reserved_bytes[alloc::StatType::All].peak, s.allocated_bytes[alloc::StatType::All].peak,
          s.requested_bytes[alloc::StatType::All].peak};
}

}  // namespace anatomy::testing
