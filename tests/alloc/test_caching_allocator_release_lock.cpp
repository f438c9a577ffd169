// release_lock_on_cudamalloc on the simulated device: a reservation held inside the provider (a
// cudaMalloc waiting on the driver) while other threads use the allocator, and what they may
// change meanwhile (Note [Reserving without the lock] in alloc/caching_segments.cpp). Each test
// orders its threads with the provider's hold; no test's outcome depends on how fast a thread
// runs (the waits with a time limit only turn a hang into a failure, or give a bug time to
// show). Also run under ThreadSanitizer as part of anatomy_thread_tests (scripts/test-tsan.sh).
#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "alloc_test_util.h"

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

using namespace anatomy::alloc;
using anatomy_test::all;
using anatomy_test::alloc;
using anatomy_test::check_segments;
using anatomy_test::check_stats;
using anatomy_test::Shadow;

namespace {

constexpr size_t kCapacity = 64 * kMB;

AllocConf release_lock_conf() {
  AllocConf conf;
  conf.release_lock_on_cudamalloc = true;
  return conf;
}

// Runs `f` on a thread of its own while the provider holds a reservation, and says whether `f`
// finished with the hold still in place. A thread stuck behind the allocator's lock cannot: the
// hold is then lifted after a minute (far past any scheduling delay; a correct run returns in
// microseconds) so that the test fails instead of hanging.
template <typename F>
bool finishes_while_held(SimulatedProvider& p, F&& f) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread worker([&] {
    f();
    {
      std::lock_guard<std::mutex> g(m);
      done = true;
    }
    cv.notify_all();
  });
  bool finished;
  {
    std::unique_lock<std::mutex> g(m);
    finished = cv.wait_for(g, std::chrono::seconds(60), [&] { return done; });
  }
  if (!finished) p.release_reserves();
  worker.join();
  return finished;
}

// Allocates `n` bytes on a thread of its own; join() returns the block, or nullptr after an
// OutOfMemoryError.
class AllocatingThread {
 public:
  AllocatingThread(CachingAllocator& a, size_t n, StreamId stream = 0)
      : thread_([this, &a, n, stream] {
          try {
            ptr_ = alloc(a, n, stream);
          } catch (const anatomy::OutOfMemoryError&) {
            ptr_ = nullptr;
          }
        }) {}
  char* join() {
    thread_.join();
    return ptr_;
  }

 private:
  char* ptr_ = nullptr;
  std::thread thread_;
};

}  // namespace

TEST_CASE("release_lock_on_cudamalloc: other threads allocate, free and change settings while one reserves") {
  SimulatedProvider p(kCapacity);
  CachingAllocator a(p, release_lock_conf());
  char* cached = alloc(a, 4096);  // leaves a cached 2 MiB small segment
  a.raw_free(cached);

  p.hold_reserves();
  AllocatingThread reserving(a, 30 * kMB);  // no cached block fits: reserves, and waits there
  p.wait_for_held_reserves();
  char* again = nullptr;
  MemoryStats during;
  const bool finished = finishes_while_held(p, [&] {
    again = alloc(a, 4096);
    a.raw_free(again);
    during = a.stats();
    a.empty_cache();  // gives the small segment back
    a.record_memory_history(true);
    AllocConf conf = a.conf();
    conf.release_lock_on_cudamalloc = false;
    conf.max_split_size = 100 * kMB;
    a.set_conf(conf);
  });
  CHECK(finished);
  CHECK(again == cached);
  // The reservation in flight is not accounted until its thread has the lock back.
  CHECK(during.num_provider_allocs == 1);
  CHECK(all(during.segment) == 1);
  CHECK(all(during.allocation) == 0);
  CHECK(all(during.reserved_bytes) == static_cast<int64_t>(kSmallBuffer));

  p.release_reserves();
  char* big = reserving.join();
  REQUIRE(big != nullptr);
  const Shadow live{{big, 30 * kMB}};
  check_stats(a, p, live);
  check_segments(a, live);
  MemoryStats s = a.stats();
  CHECK(all(s.reserved_bytes) == static_cast<int64_t>(30 * kMB));
  CHECK(s.num_ooms == 0);
  // Recording began while the reservation was in flight: it is recorded when accounted.
  MemorySnapshot snap = a.memory_snapshot();
  REQUIRE(snap.trace.size() == 2);
  CHECK(snap.trace[0].action == TraceAction::SegmentAlloc);
  CHECK(snap.trace[0].size == 30 * kMB);
  CHECK(snap.trace[1].action == TraceAction::Alloc);
  CHECK(snap.trace[1].address == reinterpret_cast<uintptr_t>(big));
  a.raw_free(big);
  a.empty_cache();
  CHECK(p.counters().used_bytes == 0);
}

TEST_CASE("release_lock_on_cudamalloc off: another thread waits until the reservation returns") {
  SimulatedProvider p(kCapacity);
  CachingAllocator a(p, AllocConf{});
  a.raw_free(alloc(a, 4096));

  std::mutex m;
  std::condition_variable cv;
  bool started = false, done = false;
  p.hold_reserves();
  AllocatingThread reserving(a, 30 * kMB);
  p.wait_for_held_reserves();
  std::thread second([&] {
    {
      std::lock_guard<std::mutex> g(m);
      started = true;
    }
    cv.notify_all();
    a.raw_free(alloc(a, 4096));  // a cached block, but the lock is held across the reservation
    {
      std::lock_guard<std::mutex> g(m);
      done = true;
    }
    cv.notify_all();
  });
  // The second thread cannot finish while the reservation is held, however long it is given:
  // the wait below only gives a wrongly unlocked allocator the time to show itself, and a slow
  // machine makes it pass all the same.
  bool done_while_held;
  {
    std::unique_lock<std::mutex> g(m);
    cv.wait(g, [&] { return started; });
    done_while_held = cv.wait_for(g, std::chrono::milliseconds(200), [&] { return done; });
  }
  CHECK_FALSE(done_while_held);
  p.release_reserves();
  char* big = reserving.join();
  second.join();
  CHECK(done);
  REQUIRE(big != nullptr);
  check_stats(a, p, Shadow{{big, 30 * kMB}});
  check_segments(a, Shadow{{big, 30 * kMB}});
  a.raw_free(big);
}

TEST_CASE("release_lock_on_cudamalloc: a failed reservation takes a block freed meanwhile instead of running out") {
  SimulatedProvider p(kCapacity);
  CachingAllocator a(p, release_lock_conf());
  // One 40 MiB segment cut into 8 MiB and 32 MiB blocks, both in use.
  char* x = alloc(a, 40 * kMB);
  a.raw_free(x);
  char* y = alloc(a, 8 * kMB);
  char* z = alloc(a, 32 * kMB);
  REQUIRE(y == x);
  REQUIRE(z == x + 8 * kMB);

  p.hold_reserves();
  AllocatingThread reserving(a, 30 * kMB);  // 30 MiB more than the 24 MiB the device has left
  p.wait_for_held_reserves();
  CHECK(finishes_while_held(p, [&] { a.raw_free(z); }));
  p.release_reserves();
  char* big = reserving.join();
  // The reservation failed; the freed block fits. The OOM ladder would not have found it: its
  // segment is split (y is in use), so releasing the cache frees nothing.
  CHECK(big == z);
  MemoryStats s = a.stats();
  CHECK(p.counters().failed_reserves == 1);
  CHECK(s.num_ooms == 0);
  CHECK(s.num_alloc_retries == 0);
  CHECK(s.num_sync_all_streams == 0);
  const Shadow live{{y, 8 * kMB}, {big, 30 * kMB}};
  check_stats(a, p, live);
  check_segments(a, live);
  a.raw_free(y);
  a.raw_free(big);
}

TEST_CASE("release_lock_on_cudamalloc: two threads reserving at once stay within per_process_memory_fraction") {
  SimulatedProvider p(kCapacity);
  AllocConf conf = release_lock_conf();
  conf.per_process_memory_fraction = 0.5;  // 32 MiB
  CachingAllocator a(p, conf);

  p.hold_reserves();
  AllocatingThread reserving(a, 20 * kMB);
  p.wait_for_held_reserves();
  // 20 MiB in flight and 20 MiB more would pass 32 MiB: refused without reaching the provider.
  bool oom = false;
  const bool finished = finishes_while_held(p, [&] {
    try {
      alloc(a, 20 * kMB);
    } catch (const anatomy::OutOfMemoryError&) {
      oom = true;
    }
  });
  CHECK(finished);
  CHECK(oom);
  p.release_reserves();
  char* first = reserving.join();
  REQUIRE(first != nullptr);
  // Once accounted, the 20 MiB count as reserved, and what is left under the limit is usable.
  char* second = alloc(a, 12 * kMB);
  MemoryStats s = a.stats();
  CHECK(s.num_ooms == 1);
  CHECK(s.reserved_bytes[StatType::All].peak == static_cast<int64_t>(32 * kMB));
  CHECK(p.counters().reserves == 2);
  const Shadow live{{first, 20 * kMB}, {second, 12 * kMB}};
  check_stats(a, p, live);
  check_segments(a, live);
  a.raw_free(first);
  a.raw_free(second);
}

TEST_CASE("release_lock_on_cudamalloc: a private pool whose last user goes during its reservation stays until done") {
  SimulatedProvider p(kCapacity);
  CachingAllocator a(p, release_lock_conf());
  const PoolId pool = a.create_pool();
  a.begin_allocate_to_pool(pool, [](StreamId s) { return s == 1; });

  p.hold_reserves();
  AllocatingThread reserving(a, 30 * kMB, /*stream=*/1);
  p.wait_for_held_reserves();
  size_t pools_meanwhile = 0;
  CHECK(finishes_while_held(p, [&] {
    a.end_allocate_to_pool(pool);
    a.release_pool(pool);  // the last user: the pool has no segment yet, but a request in flight
    pools_meanwhile = a.pools().size();
  }));
  CHECK(pools_meanwhile == 1);
  p.release_reserves();
  char* big = reserving.join();
  REQUIRE(big != nullptr);
  const PoolStats ps = a.pool_stats(pool);
  CHECK(ps.use_count == 0);
  CHECK(ps.segments == 1);
  CHECK(ps.allocations == 1);
  std::vector<SegmentInfo> segs = a.segments();
  REQUIRE(segs.size() == 1);
  CHECK(segs[0].pool == pool);
  check_stats(a, p, Shadow{{big, 30 * kMB}});
  // Its last block freed, the pool retires: the segment becomes an ordinary cached one.
  a.raw_free(big);
  CHECK(a.pools().empty());
  segs = a.segments();
  REQUIRE(segs.size() == 1);
  CHECK(segs[0].pool.is_default());
  CHECK(alloc(a, 30 * kMB, /*stream=*/1) == big);
  a.raw_free(big);
}
