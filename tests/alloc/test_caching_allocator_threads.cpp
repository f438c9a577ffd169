// The caching allocator from 8 threads at once on the simulated device, with and without the
// memory history. Besides the main test binary, this file alone (with alloc/ and the few core
// and dispatch files it needs) is built with ThreadSanitizer as anatomy_alloc_tsan_tests, which
// scripts/test.sh runs in CI (tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/memory_snapshot.h"
#include "anatomy/alloc/simulated_provider.h"
#include "alloc_test_util.h"
#include "anatomy/dispatch/current_op.h"

using namespace anatomy::alloc;
using anatomy_test::all;

namespace {

// 8 threads allocating and freeing at once (record_stream on other streams, a ninth thread
// completing events), each checking its blocks were not touched by another; with `record`, the
// memory history records every event, with an operator name on half the threads.
void run_threads(bool record) {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, AllocConf{});
  if (record) a.record_memory_history(true, 5000);
  std::atomic<int> corrupted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&a, &corrupted, t] {
      std::mt19937 rng(static_cast<uint32_t>(t));
      SimulatedProvider::set_current_stream(t % 3);
      std::vector<std::pair<anatomy::DataPtr, size_t>> held;
      std::optional<anatomy::dispatch::CurrentOpScope> op;
      if (t % 2 == 0) op.emplace(t % 4 == 0 ? "aten::add.Tensor" : "aten::mm");
      for (int i = 0; i < 3000; ++i) {
        if (held.size() < 16 && rng() % 2 == 0) {
          size_t n = 1 + rng() % (rng() % 4 == 0 ? 4 * kMB : 8192);
          anatomy::DataPtr d = a.allocate(n);
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
  for (auto& th : threads) th.join();
  completer.join();
  CHECK(corrupted.load() == 0);
  a.empty_cache();  // synchronizes: every deferred free completes
  MemoryStats s = a.stats();
  CHECK(all(s.allocation) == 0);
  CHECK(all(s.active) == 0);
  CHECK(all(s.reserved_bytes) == 0);
  CHECK(p.counters().used_bytes == 0);
  if (record) {
    anatomy::alloc::MemorySnapshot snap = a.memory_snapshot();
    REQUIRE(snap.trace.size() == 5000);
    for (size_t i = 1; i < snap.trace.size(); ++i) REQUIRE(snap.trace[i].seq == snap.trace[i - 1].seq + 1);
    CHECK(snap.trace.back().action == TraceAction::SegmentFree);  // empty_cache's releases come last
  }
}

}  // namespace

TEST_CASE("caching allocator: 8 threads allocate and free at once") { run_threads(false); }

TEST_CASE("caching allocator: 8 threads allocate and free at once, recording the history") { run_threads(true); }
