// Note [Allocating while a graph captures] on the simulated device: while a route to a private
// pool is in force (a CUDA graph captures), the allocator neither queries nor records events and
// gives no memory back; what it deferred happens when the last route ends.
#include <doctest/doctest.h>

#include "../core/test_util.h"
#include "alloc_test_util.h"

using namespace anatomy::alloc;
using anatomy_test::all;
using anatomy_test::alloc;
using anatomy_test::check_segments;

TEST_CASE("caching allocator while routing: a freed block used by other streams waits for the route's end") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* x = alloc(a, 1000, 0);
  a.record_stream(x, 2);
  PoolId pool = a.create_pool();
  a.begin_allocate_to_pool(pool, [](StreamId s) { return s == 1; });
  a.raw_free(x);
  CHECK(p.counters().live_events == 0);  // no event recorded during the capture
  CHECK(all(a.stats().active) == 1);     // still active: stream 2 may be using it
  char* y = alloc(a, 1000, 0);
  CHECK(y != x);
  a.raw_free(y);
  a.end_allocate_to_pool(pool);
  CHECK(p.pending_events(2) == 1);  // recorded once the route ended
  p.complete_all(2);
  CHECK(alloc(a, 1000, 0) == x);
  a.raw_free(x);
  a.release_pool(pool);
  CHECK(p.counters().synchronizes == 0);
}

TEST_CASE("caching allocator while routing: completed events are not processed until the route ends") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* x = alloc(a, 1000, 0);
  a.record_stream(x, 2);
  a.raw_free(x);
  CHECK(p.pending_events(2) == 1);
  PoolId pool = a.create_pool();
  a.begin_allocate_to_pool(pool, [](StreamId s) { return s == 1; });
  p.complete_all(2);
  char* y = alloc(a, 1000, 0);  // the event is done, but nothing queries it during a capture
  CHECK(y != x);
  a.raw_free(y);
  a.end_allocate_to_pool(pool);
  CHECK(alloc(a, 1000, 0) == x);  // processed at the first allocation after the route
  a.raw_free(x);
  a.release_pool(pool);
}

TEST_CASE("caching allocator while routing: out of memory gives no cache back and does not synchronize") {
  SimulatedProvider p(48 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* big = alloc(a, 30 * kMB, 0);
  a.raw_free(big);  // cached: 30 MiB of the 48 reserved and free
  PoolId pool = a.create_pool();
  a.begin_allocate_to_pool(pool, [](StreamId s) { return s == 1; });
  EXPECT_ERROR(OutOfMemoryError, a.raw_alloc(30 * kMB, 1), "out of memory");
  CHECK(p.counters().releases == 0);
  CHECK(p.counters().synchronizes == 0);
  a.end_allocate_to_pool(pool);
  char* ordinary = alloc(a, 30 * kMB, 1);  // no route: the ladder releases the cached segment
  CHECK(p.counters().releases == 1);
  a.raw_free(ordinary);
  a.release_pool(pool);
}
