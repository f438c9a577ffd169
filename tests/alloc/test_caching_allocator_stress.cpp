// The caching allocator under load on the simulated device: random runs of mixed-size
// allocations on several streams checked against a shadow model after every step, and 8 threads
// allocating and freeing at once, with and without the memory history (run under the ASan build
// and under TSan by scripts/test-tsan.sh).
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "../core/test_util.h"
#include "alloc_test_util.h"
#include "anatomy/alloc/memory_snapshot.h"
#include "anatomy/dispatch/current_op.h"

using namespace anatomy::alloc;
using anatomy_test::check_segments;
using anatomy_test::check_stats;
using anatomy_test::Shadow;

namespace {

int64_t all(const StatArray& s) { return s[StatType::All].current; }

// 1e5 random allocations and frees of mixed sizes on three streams, some used on other streams
// (record_stream) whose work completes at random; stats checked against a shadow model after
// every step, every segment walked every 2,000 steps, and nothing left once all is freed. Where
// the settings make memory run out, an OutOfMemoryError must leave everything as it was.
// Returns the number of OOMs.
int64_t random_run(const AllocConf& conf, int steps, uint32_t seed) {
  SimulatedProvider p(2048 * kMB);
  CachingAllocator a(p, conf);
  std::mt19937 rng(seed);
  Shadow live;
  std::map<char*, size_t> rounded;  // live blocks' extents, to prove they never overlap
  std::vector<char*> order;
  int64_t requested = 0;
  auto size_of = [&]() -> size_t {
    uint32_t kind = rng() % 100;
    if (kind < 60) return 1 + rng() % (64 * 1024);              // small, mostly tiny
    if (kind < 75) return 1 + rng() % kSmallSize;               // small, up to the pool's limit
    if (kind < 97) return kSmallSize + 1 + rng() % (12 * kMB);  // large, both segment kinds
    return 1 + rng() % (48 * kMB);                              // big ones, above max_split_size
  };
  for (int step = 0; step < steps; ++step) {
    bool do_alloc = live.empty() || (live.size() < 300 && rng() % 100 < 52);
    if (do_alloc) {
      size_t n = size_of();
      StreamId s = static_cast<StreamId>(rng() % 3);
      char* ptr = nullptr;
      try {
        ptr = static_cast<char*>(a.raw_alloc(n, s));
      } catch (const anatomy::OutOfMemoryError&) {
        check_stats(a, p, live, requested);
        continue;
      }
      auto next = rounded.lower_bound(ptr);
      REQUIRE((next == rounded.end() || ptr + n <= next->first));
      if (next != rounded.begin()) {
        auto prev = std::prev(next);
        REQUIRE(prev->first + prev->second <= ptr);
      }
      live[ptr] = n;
      rounded[ptr] = n;
      requested += static_cast<int64_t>(n);
      order.push_back(ptr);
      if (rng() % 8 == 0) a.record_stream(ptr, static_cast<StreamId>(rng() % 3));
    } else {
      size_t i = rng() % order.size();
      char* ptr = order[i];
      order[i] = order.back();
      order.pop_back();
      a.raw_free(ptr);
      requested -= static_cast<int64_t>(live[ptr]);
      live.erase(ptr);
      rounded.erase(ptr);
    }
    if (rng() % 16 == 0) p.complete_all(static_cast<StreamId>(rng() % 3));
    if (step % 25000 == 24999) a.empty_cache();
    check_stats(a, p, live, requested);
    if (step % 2000 == 0) check_segments(a, live);
  }
  check_segments(a, live);
  for (char* ptr : order) a.raw_free(ptr);
  live.clear();
  for (StreamId s = 0; s < 3; ++s) p.complete_all(s);
  a.raw_free(a.raw_alloc(1, 0));  // processes the completed events
  check_segments(a, live);
  MemoryStats s = a.stats();
  CHECK(all(s.allocated_bytes) == 0);
  CHECK(all(s.active) == 0);
  CHECK(all(s.inactive_split) == 0);  // every split segment merged back whole
  CHECK(p.counters().live_events == 0);
  a.empty_cache();
  CHECK(all(a.stats().reserved_bytes) == 0);
  CHECK(p.counters().used_bytes == 0);
  CHECK(a.segments().empty());
  return s.num_ooms;
}

}  // namespace

TEST_CASE("caching allocator: 1e5 random steps keep split and merge invariants") {
  CHECK(random_run(AllocConf{}, 100000, 1234) == 0);
}

TEST_CASE("caching allocator: random steps with max_split_size and power-of-two rounding") {
  CHECK(random_run(parse_alloc_conf("max_split_size_mb:24,roundup_power2_divisions:[1:2,4:4,>:8]"), 30000, 99) == 0);
}

TEST_CASE("caching allocator: random steps near the memory limit, with garbage collection") {
  int64_t ooms = random_run(
      parse_alloc_conf("per_process_memory_fraction:0.25,garbage_collection_threshold:0.5,max_split_size_mb:24"), 20000,
      7);
  CHECK(ooms > 0);  // the run did reach the out-of-memory path
}
