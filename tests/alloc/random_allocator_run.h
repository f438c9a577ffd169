// The caching allocator's randomized suite, over any MemoryProvider: random allocations and frees
// of mixed sizes on several streams, some blocks used on other streams (record_stream), with the
// stats checked against a shadow model after every step, every segment walked every 2,000 steps,
// and nothing left once all is freed. What differs between devices is behind RandomRunDevice:
// on the simulated device the run decides when events complete (SimulatedRunDevice below); over a
// real provider they complete by themselves, so nothing here assumes when a deferred free
// finishes (tests/gpu/test_cuda_allocator.cpp runs it over CUDA).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "alloc_test_util.h"

#include "anatomy/anatomy.h"

namespace anatomy_test {

using namespace anatomy::alloc;

// The device side of a random run.
class RandomRunDevice {
 public:
  virtual ~RandomRunDevice() = default;
  // A block of `n` bytes was just allocated on `stream`: a real device queues work on it there.
  virtual void use(void* /*ptr*/, size_t /*n*/, StreamId /*stream*/) {}
  // `other` uses the block too (just passed to record_stream), after the work on `stream` so far.
  virtual void use_also(void* /*ptr*/, size_t /*n*/, StreamId /*stream*/, StreamId /*other*/) {}
  // After every step, with the run's generator: the simulated device completes some work here.
  virtual void after_step(std::mt19937& /*rng*/) {}
  // After every step: the stats against the shadow model (`requested`: its byte total), and
  // against what the device itself counted where it can say.
  virtual void check(const CachingAllocator& a, const Shadow& live, int64_t requested) {
    check_allocator_stats(a, live, requested);
  }
  // Waits until every stream's work so far is done (the end of the run).
  virtual void finish() = 0;
  // Once everything is freed and finished: no event is outstanding (before empty_cache, which
  // would destroy any that were).
  virtual void check_events_done() {}
  // Once the cache is emptied too: nothing is left on the device.
  virtual void check_released() {}
  // After an empty_cache, which unmaps pages of expandable segments: every live block is still
  // usable (the simulated device writes its first and last byte; an unmapped page would fault).
  virtual void touch(const Shadow& /*live*/) {}
};

// The simulated device: each step completes every event of a random stream one time in 16. Its
// memory is the host's, so a block is written where it is handed out and after each empty_cache.
class SimulatedRunDevice final : public RandomRunDevice {
 public:
  SimulatedRunDevice(SimulatedProvider& p, std::vector<StreamId> streams) : p_(p), streams_(std::move(streams)) {}
  void use(void* ptr, size_t n, StreamId /*stream*/) override {
    static_cast<char*>(ptr)[0] = 1;
    static_cast<char*>(ptr)[n - 1] = 1;
  }
  void touch(const Shadow& live) override {
    for (const auto& [ptr, n] : live) use(ptr, n, 0);
  }
  void after_step(std::mt19937& rng) override {
    if (rng() % 16 == 0) p_.complete_all(streams_[rng() % streams_.size()]);
  }
  void check(const CachingAllocator& a, const Shadow& live, int64_t requested) override {
    check_stats(a, p_, live, requested);
  }
  void finish() override {
    for (StreamId s : streams_) p_.complete_all(s);
  }
  void check_events_done() override { CHECK(p_.counters().live_events == 0); }
  void check_released() override { CHECK(p_.counters().used_bytes == 0); }

 private:
  SimulatedProvider& p_;
  std::vector<StreamId> streams_;
};

struct RandomRunOptions {
  int steps = 100000;
  uint32_t seed = 1234;
  std::vector<StreamId> streams = {0, 1, 2};
  size_t max_live = 300;  // blocks held at once, at most
  int empty_cache_every = 25000;
  int walk_every = 2000;  // check_segments every this many steps
};

struct RandomRunResult {
  int64_t ooms = 0;            // requests that threw OutOfMemoryError
  int64_t record_streams = 0;  // blocks used on a second stream
  int64_t deferred_seen = 0;   // walks that found a block waiting for another stream's work
  int64_t unmapped_seen = 0;   // unmapped blocks (holes of expandable segments) the walks found
};

// The run, on `a` (which must start empty). An OutOfMemoryError, where the settings make memory
// run out, must leave everything as it was.
inline RandomRunResult random_allocator_run(CachingAllocator& a, RandomRunDevice& device, const RandomRunOptions& o) {
  std::mt19937 rng(o.seed);
  RandomRunResult result;
  Shadow live;
  std::vector<char*> order;
  int64_t requested = 0;
  const auto n_streams = static_cast<uint32_t>(o.streams.size());
  auto size_of = [&]() -> size_t {
    uint32_t kind = rng() % 100;
    if (kind < 60) return 1 + rng() % (64 * 1024);              // small, mostly tiny
    if (kind < 75) return 1 + rng() % kSmallSize;               // small, up to the pool's limit
    if (kind < 97) return kSmallSize + 1 + rng() % (12 * kMB);  // large, both segment kinds
    return 1 + rng() % (48 * kMB);                              // big ones, above max_split_size
  };
  auto walk = [&] {
    check_segments(a, live);
    for (const SegmentInfo& seg : a.segments()) {
      for (const BlockInfo& b : seg.blocks) {
        result.deferred_seen += b.pending_free ? 1 : 0;
        result.unmapped_seen += b.unmapped ? 1 : 0;
      }
    }
  };
  for (int step = 0; step < o.steps; ++step) {
    bool do_alloc = live.empty() || (live.size() < o.max_live && rng() % 100 < 52);
    if (do_alloc) {
      size_t n = size_of();
      StreamId s = o.streams[rng() % n_streams];
      char* ptr = nullptr;
      try {
        ptr = static_cast<char*>(a.raw_alloc(n, s));
      } catch (const anatomy::OutOfMemoryError&) {
        ++result.ooms;
        device.check(a, live, requested);
        continue;
      }
      // Live blocks never overlap: the next one starts at or after this one's end, the previous
      // one ends at or before its start.
      auto next = live.lower_bound(ptr);
      REQUIRE((next == live.end() || ptr + n <= next->first));
      if (next != live.begin()) {
        auto prev = std::prev(next);
        REQUIRE(prev->first + prev->second <= ptr);
      }
      live[ptr] = n;
      requested += static_cast<int64_t>(n);
      order.push_back(ptr);
      device.use(ptr, n, s);
      if (rng() % 8 == 0) {
        StreamId other = o.streams[rng() % n_streams];
        a.record_stream(ptr, other);
        if (other != s) {
          device.use_also(ptr, n, s, other);
          ++result.record_streams;
        }
      }
    } else {
      free_random_block(a, order, live, requested, rng);
    }
    device.after_step(rng);
    if (step % o.empty_cache_every == o.empty_cache_every - 1) {
      a.empty_cache();
      device.touch(live);
    }
    device.check(a, live, requested);
    if (step % o.walk_every == 0) walk();
  }
  walk();
  for (char* ptr : order) a.raw_free(ptr);
  live.clear();
  device.finish();
  a.raw_free(a.raw_alloc(1, o.streams[0]));  // processes the completed events
  check_segments(a, live);
  MemoryStats s = a.stats();
  CHECK(s.allocated_bytes[StatType::All].current == 0);
  CHECK(s.active[StatType::All].current == 0);
  // Every split segment merged back whole, but for the free blocks between the holes of an
  // expandable segment (which do not merge with holes: empty_cache gives those back).
  bool holes = false;
  for (const SegmentInfo& seg : a.segments()) {
    bool has_hole = false;
    for (const BlockInfo& b : seg.blocks) has_hole |= b.unmapped;
    CHECK((has_hole || seg.blocks.size() == 1));
    holes |= has_hole;
  }
  if (!holes) CHECK(s.inactive_split[StatType::All].current == 0);
  CHECK(s.num_ooms == result.ooms);
  device.check_events_done();
  a.empty_cache();
  CHECK(a.stats().reserved_bytes[StatType::All].current == 0);
  CHECK(a.segments().empty());
  device.check_released();
  return result;
}

}  // namespace anatomy_test
