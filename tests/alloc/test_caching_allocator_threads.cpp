// The caching allocator from 8 threads at once on the simulated device, with and without the
// memory history, and with release_lock_on_cudamalloc under a memory limit. Besides the main
// test binary, this file runs against a ThreadSanitizer build of the library as part of
// anatomy_thread_tests (scripts/test-tsan.sh), which scripts/test.sh runs in CI.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "alloc_test_util.h"
#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/simulated_provider.h"
#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/dispatch/current_op.h"

using namespace anatomy::alloc;
using anatomy_test::all;

namespace {

struct ThreadRun {
  bool record = false;  // the memory history records every event
  AllocConf conf{};
  // Requests may run out of memory (counted, not failures), and a tenth thread empties the cache
  // and reads the stats meanwhile.
  bool tight = false;
};

// 8 threads allocating and freeing at once (record_stream on other streams, a ninth thread
// completing events), each checking its blocks were not touched by another; with `record`, the
// memory history records every event, with an operator name on half the threads.
void run_threads(const ThreadRun& run) {
  const bool record = run.record;
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, run.conf);
  if (record) a.record_memory_history(true, 5000);
  std::atomic<int> corrupted{0};
  std::atomic<int> ooms{0};
  std::atomic<bool> allocating{true};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&a, &corrupted, &ooms, t] {
      std::mt19937 rng(static_cast<uint32_t>(t));
      SimulatedProvider::set_current_stream(t % 3);
      std::vector<std::pair<anatomy::DataPtr, size_t>> held;
      std::optional<anatomy::dispatch::CurrentOpScope> op;
      if (t % 2 == 0) op.emplace(t % 4 == 0 ? "aten::add.Tensor" : "aten::mm");
      for (int i = 0; i < 3000; ++i) {
        if (held.size() < 16 && rng() % 2 == 0) {
          size_t n = 1 + rng() % (rng() % 4 == 0 ? 4 * kMB : 8192);
          anatomy::DataPtr d;
          try {
            d = a.allocate(n);
          } catch (const anatomy::OutOfMemoryError&) {
            ++ooms;
            continue;
          }
          // Fill with a byte of this thread's own: an overlap with another thread's block shows
          // up as a changed byte (and as an error under ASan if it reaches outside a segment).
          std::memset(d.get(), t + 1, std::min<size_t>(n, 4096));
          if (rng() % 4 == 0) a.record_stream(d.get(), (t + 1) % 3);
          held.emplace_back(std::move(d), n);
        } else if (!held.empty()) {
          auto& [d, n] = held.back();
          const auto* bytes = static_cast<const unsigned char*>(d.get());
          int bad = 0;
          for (size_t k = 0; k < std::min<size_t>(n, 4096); ++k) bad += bytes[k] != t + 1;
          corrupted += bad;
          held.pop_back();
        }
      }
    });
  }
  std::thread completer([&p] {
    for (int i = 0; i < 2000; ++i) p.complete_all(i % 3);
  });
  std::atomic<int> stats_problems{0};
  std::thread churn([&] {
    if (!run.tight) return;
    const double limit = run.conf.per_process_memory_fraction * static_cast<double>(p.total_memory());
    for (int i = 0; allocating.load(); ++i) {
      if (i % 64 == 0) a.empty_cache();
      // What must hold at any moment another thread can see, blocks in use or not.
      MemoryStats s = a.stats();
      bool ok = s.reserved_bytes[StatType::All].current >= s.active_bytes[StatType::All].current &&
                s.active_bytes[StatType::All].current >= s.allocated_bytes[StatType::All].current &&
                static_cast<double>(s.reserved_bytes[StatType::All].current) <= limit;
      s.for_each_array([&](StatArray& arr) {
        ok = ok && arr[StatType::All].current == arr[StatType::Small].current + arr[StatType::Large].current &&
             arr[StatType::All].allocated - arr[StatType::All].freed == arr[StatType::All].current;
      });
      stats_problems += !ok;
    }
  });
  for (auto& th : threads) th.join();
  allocating = false;
  completer.join();
  churn.join();
  CHECK(corrupted.load() == 0);
  CHECK(stats_problems.load() == 0);
  a.empty_cache();  // synchronizes: every deferred free completes
  MemoryStats s = a.stats();
  CHECK(all(s.allocation) == 0);
  CHECK(all(s.active) == 0);
  CHECK(all(s.reserved_bytes) == 0);
  CHECK(p.counters().used_bytes == 0);
  if (run.tight) {
    MESSAGE("out of memory ", ooms.load(), " times");
    // Reservations made at once, some with the lock dropped, never passed the limit together.
    CHECK(static_cast<double>(s.reserved_bytes[StatType::All].peak) <=
          run.conf.per_process_memory_fraction * static_cast<double>(p.total_memory()));
    CHECK(s.num_ooms == ooms.load());
  } else {
    CHECK(ooms.load() == 0);
  }
  if (record) {
    anatomy::alloc::MemorySnapshot snap = a.memory_snapshot();
    REQUIRE(snap.trace.size() == 5000);
    for (size_t i = 1; i < snap.trace.size(); ++i) REQUIRE(snap.trace[i].seq == snap.trace[i - 1].seq + 1);
    CHECK(snap.trace.back().action == TraceAction::SegmentFree);  // empty_cache's releases come last
  }
}

}  // namespace

TEST_CASE("caching allocator: 8 threads allocate and free at once") { run_threads({}); }

TEST_CASE("caching allocator: 8 threads allocate and free at once, recording the history") {
  run_threads({.record = true});
}

// Reservations drop the lock (Note [Reserving without the lock]) while other threads allocate,
// free, empty the cache and run out of memory under a limit of 64 MiB.
TEST_CASE("caching allocator: 8 threads allocate and free at once, release_lock_on_cudamalloc, tight memory") {
  AllocConf conf;
  conf.release_lock_on_cudamalloc = true;
  conf.per_process_memory_fraction = 64.0 / 1024.0;
  run_threads({.conf = conf, .tight = true});
}
