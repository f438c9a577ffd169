// Ledger: the caching allocator's counters (MemoryStats) and memory history (MemoryHistory). The
// locked front (caching_allocator.cpp) owns it and reads it for stats(), snapshots and the
// summary; the segments part records its reservations, releases, maps and unmaps into it as they
// happen, so that the counters are exact whenever the lock is free.
#pragma once

#include <cstddef>

#include "anatomy/alloc/memory_history.h"
#include "anatomy/alloc/memory_provider.h"
#include "anatomy/alloc/memory_stats.h"
#include "anatomy/core/macros.h"

namespace anatomy::alloc {

struct Ledger {
  MemoryStats stats;
  MemoryHistory history;

  // An event for the history, while it records (a branch otherwise).
  void trace(TraceAction action, const void* address, size_t size, StreamId stream) {
    if (ANATOMY_UNLIKELY(history.enabled())) history.record(action, address, size, stream);
  }
  // `f` on the StatTypes a block of the small or the large pool counts in: All, and its pool's.
  template <typename F>
  static void for_stat(bool is_small, F&& f) {
    f(StatType::All);
    f(is_small ? StatType::Small : StatType::Large);
  }
  // Adds a signed change to `stat`: an increase when positive, a decrease when negative.
  static void add(Stat& stat, int64_t change) {
    if (change > 0) stat.increase(change);
    if (change < 0) stat.decrease(-change);
  }
};

}  // namespace anatomy::alloc
