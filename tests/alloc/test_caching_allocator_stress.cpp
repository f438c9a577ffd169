// The caching allocator under load on the simulated device: the randomized suite
// (random_allocator_run.h) with the test deciding when events complete, as three runs with
// different settings, and once with events completing by themselves on another thread, as they
// do over a real device (the GPU test runs the same suite over CUDA). The 8-thread test is in
// test_caching_allocator_threads.cpp.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "random_allocator_run.h"

using namespace anatomy::alloc;
using anatomy_test::random_allocator_run;
using anatomy_test::RandomRunOptions;
using anatomy_test::RandomRunResult;
using anatomy_test::SimulatedRunDevice;

namespace {

RandomRunResult simulated_run(const AllocConf& conf, int steps, uint32_t seed) {
  SimulatedProvider p(2048 * kMB);
  CachingAllocator a(p, conf);
  RandomRunOptions o;
  o.steps = steps;
  o.seed = seed;
  SimulatedRunDevice device(p, o.streams);
  return random_allocator_run(a, device, o);
}

}  // namespace

TEST_CASE("caching allocator: 1e5 random steps keep split and merge invariants") {
  RandomRunResult r = simulated_run(AllocConf{}, 100000, 1234);
  CHECK(r.ooms == 0);
  CHECK(r.record_streams > 1000);
  CHECK(r.deferred_seen > 0);  // the walks did meet frees waiting for another stream
}

TEST_CASE("caching allocator: random steps with max_split_size and power-of-two rounding") {
  RandomRunResult r =
      simulated_run(parse_alloc_conf("max_split_size_mb:24,roundup_power2_divisions:[1:2,4:4,>:8]"), 30000, 99);
  CHECK(r.ooms == 0);
}

TEST_CASE("caching allocator: random steps near the memory limit, with garbage collection") {
  RandomRunResult r = simulated_run(
      parse_alloc_conf("per_process_memory_fraction:0.25,garbage_collection_threshold:0.5,max_split_size_mb:24"), 20000,
      7);
  CHECK(r.ooms > 0);  // the run did reach the out-of-memory path
}

namespace {

// The simulated device with its events completed by another thread at its own pace, so that the
// run cannot know whether a query finds an event done: how a real device behaves.
class BackgroundCompletion final : public anatomy_test::RandomRunDevice {
 public:
  BackgroundCompletion(SimulatedProvider& p, std::vector<StreamId> streams)
      : p_(p), streams_(std::move(streams)), worker_([this] { complete_at_random(); }) {}
  ~BackgroundCompletion() override { stop(); }
  void check(const CachingAllocator& a, const anatomy_test::Shadow& live, int64_t requested) override {
    anatomy_test::check_stats(a, p_, live, requested);
  }
  void finish() override {
    stop();
    p_.synchronize();
  }
  void check_events_done() override { CHECK(p_.counters().live_events == 0); }
  void check_released() override { CHECK(p_.counters().used_bytes == 0); }

 private:
  void complete_at_random() {
    std::mt19937 rng(5);
    while (!done_.load(std::memory_order_relaxed)) {
      p_.complete_all(streams_[rng() % streams_.size()]);
      std::this_thread::sleep_for(std::chrono::microseconds(20 + rng() % 200));
    }
  }
  void stop() {
    done_ = true;
    if (worker_.joinable()) worker_.join();
  }

  SimulatedProvider& p_;
  std::vector<StreamId> streams_;
  std::atomic<bool> done_{false};
  std::thread worker_;
};

}  // namespace

TEST_CASE("caching allocator: the randomized suite with events completing by themselves") {
  SimulatedProvider p(2048 * kMB);
  CachingAllocator a(p, AllocConf{});
  RandomRunOptions o;
  o.steps = 20000;
  o.seed = 42;
  BackgroundCompletion device(p, o.streams);
  RandomRunResult r = random_allocator_run(a, device, o);
  CHECK(r.ooms == 0);
  CHECK(r.record_streams > 100);
  CHECK(p.counters().synchronizes >= 1);  // finish() waited for the device
}
