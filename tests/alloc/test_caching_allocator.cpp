// The caching allocator's policy on the simulated device: rounding and pools, best fit per
// stream, splitting and merging, record_stream deferral, the knobs, the out-of-memory ladder and
// its message, stats. The random runs are in test_caching_allocator_stress.cpp, the threads in
// test_caching_allocator_threads.cpp.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "../core/test_util.h"
#include "alloc_test_util.h"

using namespace anatomy::alloc;
using anatomy_test::all;
using anatomy_test::alloc;
using anatomy_test::check_segments;
using anatomy_test::check_stats;
using anatomy_test::Shadow;

TEST_CASE("caching allocator: rounding and segment sizes") {
  AllocConf d;
  CHECK(round_size(1, d) == 512);
  CHECK(round_size(512, d) == 512);
  CHECK(round_size(513, d) == 1024);
  CHECK(allocation_size(kSmallSize) == kSmallBuffer);
  CHECK(allocation_size(kSmallSize + 512) == kLargeBuffer);
  CHECK(allocation_size(10 * kMB - 512) == kLargeBuffer);
  CHECK(allocation_size(10 * kMB) == 10 * kMB);
  CHECK(allocation_size(11 * kMB + 512) == 12 * kMB);
}

TEST_CASE("caching allocator: small blocks split a 2 MiB segment and merge back when freed") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* x = alloc(a, 1000);
  char* y = alloc(a, 1000);
  CHECK(y == x + 1024);  // best fit by address packs toward the segment's start
  MemoryStats s = a.stats();
  CHECK(all(s.reserved_bytes) == static_cast<int64_t>(kSmallBuffer));
  CHECK(s.reserved_bytes[StatType::Small].current == static_cast<int64_t>(kSmallBuffer));
  CHECK(all(s.allocated_bytes) == 2048);
  CHECK(all(s.requested_bytes) == 2000);
  CHECK(all(s.inactive_split) == 1);
  CHECK(all(s.inactive_split_bytes) == static_cast<int64_t>(kSmallBuffer - 2048));
  a.raw_free(x);
  CHECK(all(a.stats().inactive_split) == 2);  // x's hole and the tail, apart: y lies between
  a.raw_free(y);
  s = a.stats();
  CHECK(all(s.inactive_split) == 0);  // all three merged into one whole segment
  CHECK(all(s.allocated_bytes) == 0);
  REQUIRE(a.segments().size() == 1);
  CHECK(a.segments()[0].blocks.size() == 1);
  CHECK(alloc(a, 4000) == x);  // cached: no second reservation
  CHECK(p.counters().reserves == 1);
  a.raw_free(x);
}

TEST_CASE("caching allocator: large pool segments, and no split that would leave 1 MiB or less") {
  SimulatedProvider p(256 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* x = alloc(a, 3 * kMB);   // a 20 MiB segment, split
  char* y = alloc(a, 11 * kMB);  // fits in the 17 MiB remainder
  CHECK(y == x + 3 * kMB);
  CHECK(p.counters().reserves == 1);
  CHECK(a.stats().reserved_bytes[StatType::Large].current == static_cast<int64_t>(20 * kMB));
  char* z = alloc(a, 11 * kMB + 1);  // a 12 MiB segment; the 0.5 MiB rest stays in the block
  CHECK(p.counters().reserves == 2);
  CHECK(all(a.stats().allocated_bytes) == static_cast<int64_t>(26 * kMB));
  for (char* q : {x, y, z}) a.raw_free(q);
  CHECK(all(a.stats().inactive_split) == 0);
}

TEST_CASE("caching allocator: best fit takes the smallest hole that fits") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* big = alloc(a, 4096);
  char* sep1 = alloc(a, 512);
  char* mid = alloc(a, 2048);
  char* sep2 = alloc(a, 512);
  a.raw_free(big);
  a.raw_free(mid);
  char* got = alloc(a, 1500);
  CHECK(got == mid);
  for (char* q : {got, sep1, sep2}) a.raw_free(q);
}

TEST_CASE("caching allocator: a block freed on one stream is not reused by another") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* x = alloc(a, 1000, 0);
  a.raw_free(x);
  char* y = alloc(a, 1000, 1);
  CHECK(y != x);
  CHECK(p.counters().reserves == 2);
  CHECK(alloc(a, 1000, 0) == x);
  a.raw_free(x);
  a.raw_free(y);
}

TEST_CASE("caching allocator: record_stream defers reuse until the other stream's work is done") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* x = alloc(a, 1000, 0);
  a.record_stream(x, 0);  // its own stream: nothing to wait for
  a.record_stream(x, 1);
  a.record_stream(x, 2);
  a.raw_free(x);
  CHECK(p.pending_events() == 2);
  MemoryStats s = a.stats();
  CHECK(all(s.allocated_bytes) == 0);
  CHECK(all(s.active) == 1);  // freed, but still active until the events complete
  char* y = alloc(a, 1000, 0);
  CHECK(y != x);
  a.raw_free(y);
  p.complete_all(1);
  char* z = alloc(a, 1000, 0);  // stream 2 has not finished
  CHECK(z != x);
  a.raw_free(z);
  p.complete_all(2);
  CHECK(alloc(a, 1000, 0) == x);  // processed at this allocation, without blocking
  CHECK(p.counters().live_events == 0);
  CHECK(p.counters().synchronizes == 0);
  a.raw_free(x);
  check_segments(a, {});
}

TEST_CASE("caching allocator: allocate() uses the current stream and returns an owning DataPtr") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  SimulatedProvider::set_current_stream(3);
  {
    anatomy::DataPtr d = a.allocate(100);
    REQUIRE(d);
    CHECK(d.device() == p.device());
    REQUIRE(a.segments().size() == 1);
    CHECK(a.segments()[0].stream == 3);
    CHECK(all(a.stats().allocation) == 1);
    CHECK_FALSE(a.allocate(0));
  }
  SimulatedProvider::set_current_stream(0);
  CHECK(all(a.stats().allocation) == 0);
}

TEST_CASE("caching allocator: bad pointers are errors") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* x = alloc(a, 1000);
  EXPECT_ERROR(ValueError, a.raw_free(x + 512), "raw_free", "was not allocated");
  EXPECT_ERROR(ValueError, a.record_stream(x + 512, 1), "record_stream");
  a.raw_free(x);
  EXPECT_ERROR(ValueError, a.raw_free(x), "already freed");
  a.raw_free(nullptr);
  CHECK(a.raw_alloc(0, 0) == nullptr);
  EXPECT_ERROR(OutOfMemoryError, a.raw_alloc(~size_t{0}, 0), "out of memory", "Tried to allocate");
  CHECK(a.stats().num_ooms == 1);
  CHECK(a.stats().reserved_bytes[StatType::All].current == static_cast<int64_t>(kSmallBuffer));
}

TEST_CASE("caching allocator: max_split_size_mb keeps oversize blocks whole") {
  SimulatedProvider p(1024 * kMB);
  SUBCASE("without the knob a 50 MiB block is split for 30 MiB") {
    CachingAllocator a(p, AllocConf{});
    a.raw_free(alloc(a, 50 * kMB));
    char* x = alloc(a, 30 * kMB);
    CHECK(p.counters().reserves == 1);
    CHECK(all(a.stats().inactive_split) == 1);
    a.raw_free(x);
  }
  SUBCASE("with max_split_size_mb:40") {
    CachingAllocator a(p, parse_alloc_conf("max_split_size_mb:40"));
    char* big = alloc(a, 50 * kMB);
    a.raw_free(big);
    char* x = alloc(a, 30 * kMB);  // below the limit: an oversize block is not used
    CHECK(x != big);
    CHECK(p.counters().reserves == 2);
    char* y = alloc(a, 45 * kMB);  // at or above it: reused, and not split
    CHECK(y == big);
    CHECK(all(a.stats().allocated_bytes) == static_cast<int64_t>(80 * kMB));
    CHECK(all(a.stats().inactive_split) == 0);
    a.raw_free(y);
    char* z = alloc(a, 29 * kMB);  // below the limit again: the oversize block stays whole
    CHECK(z != big);
    CHECK(p.counters().reserves == 3);
    for (char* q : {x, z}) a.raw_free(q);
  }
}

TEST_CASE("caching allocator: max_non_split_rounding_mb bounds how oversized a reused block may be") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, parse_alloc_conf("max_split_size_mb:40"));
  a.raw_free(alloc(a, 100 * kMB));
  char* x = alloc(a, 60 * kMB);  // 100 >= 60 + 20 (the default): a new segment
  CHECK(p.counters().reserves == 2);
  a.set_conf(parse_alloc_conf("max_split_size_mb:40,max_non_split_rounding_mb:64"));
  char* y = alloc(a, 50 * kMB);  // 100 < 50 + 64: the cached block, whole
  CHECK(p.counters().reserves == 2);
  CHECK(all(a.stats().allocated_bytes) == static_cast<int64_t>(160 * kMB));
  a.raw_free(x);
  a.raw_free(y);
}

TEST_CASE("caching allocator: roundup_power2_divisions rounds the block size") {
  SimulatedProvider p(4096 * kMB);
  CachingAllocator a(p, parse_alloc_conf("roundup_power2_divisions:4"));
  char* x = alloc(a, 1200 * kMB);
  MemoryStats s = a.stats();
  CHECK(all(s.allocated_bytes) == static_cast<int64_t>(1280 * kMB));
  CHECK(all(s.requested_bytes) == static_cast<int64_t>(1200 * kMB));
  a.raw_free(x);
  CHECK(alloc(a, 1100 * kMB) == x);  // rounds to the same 1280 MiB class: reused without waste
  a.raw_free(x);
}

TEST_CASE("caching allocator: OOM frees cached oversize blocks first, without counting a retry") {
  SimulatedProvider p(80 * kMB);
  CachingAllocator a(p, parse_alloc_conf("max_split_size_mb:40"));
  a.raw_free(alloc(a, 60 * kMB));
  char* x = alloc(a, 30 * kMB);  // 60 + 30 > 80: the cached 60 MiB block goes
  MemoryStats s = a.stats();
  CHECK(s.num_provider_frees == 1);
  CHECK(s.num_alloc_retries == 0);
  CHECK(s.num_sync_all_streams == 0);
  a.raw_free(x);
}

TEST_CASE("caching allocator: OOM releases the whole cache and retries once, counted") {
  SimulatedProvider p(24 * kMB);
  CachingAllocator a(p, AllocConf{});
  // A 22 MiB segment of stream 1 whose free waits for stream 2's work: only a synchronization
  // lets it go (a free one would go before the reservation, Note [Releasing before a new peak]).
  char* y = alloc(a, 21 * kMB, 1);
  a.record_stream(y, 2);
  a.raw_free(y);
  char* x = alloc(a, 3 * kMB, 0);  // needs 20 MiB: only after the cache is released
  MemoryStats s = a.stats();
  CHECK(s.num_alloc_retries == 1);
  CHECK(s.num_sync_all_streams == 1);
  CHECK(s.num_ooms == 0);
  CHECK(all(s.reserved_bytes) == static_cast<int64_t>(20 * kMB));
  a.raw_free(x);
}

TEST_CASE("caching allocator: out of memory message shows fragmentation, and the allocator goes on") {
  SimulatedProvider p(40 * kMB);
  CachingAllocator a(p, AllocConf{});
  Shadow live;
  char* x = alloc(a, 3 * kMB);
  char* y = alloc(a, 3 * kMB);
  a.raw_free(x);  // a 3 MiB hole before y, and a 14 MiB tail after it
  live[y] = 3 * kMB;
  EXPECT_ERROR(OutOfMemoryError, a.raw_alloc(25 * kMB, 0), "out of memory", "Tried to allocate 25.00 MiB",
               "total capacity of 40.00 MiB of which 20.00 MiB is free", "3.00 MiB is allocated",
               "17.00 MiB is reserved but unallocated", "largest free block: 14.00 MiB", "max_split_size_mb");
  MemoryStats s = a.stats();
  CHECK(s.num_ooms == 1);
  CHECK(s.num_alloc_retries == 1);
  check_stats(a, p, live);
  check_segments(a, live);
  char* z = alloc(a, 1 * kMB);
  live[z] = 1 * kMB;
  check_stats(a, p, live);
  for (char* q : {y, z}) a.raw_free(q);
  a.empty_cache();
  CHECK(p.counters().used_bytes == 0);
}

TEST_CASE("caching allocator: per_process_memory_fraction caps what may be reserved") {
  SimulatedProvider p(100 * kMB);
  CachingAllocator a(p, parse_alloc_conf("per_process_memory_fraction:0.5"));
  char* x = alloc(a, 40 * kMB);
  EXPECT_ERROR(OutOfMemoryError, a.raw_alloc(20 * kMB, 0), "per_process_memory_fraction 0.5", "50.00 MiB");
  a.raw_free(x);
}

TEST_CASE("caching allocator: garbage_collection_threshold releases old cached segments first") {
  SimulatedProvider p(100 * kMB);
  // 80 MiB were reserved once: below that the cache is kept (Note [Releasing before a new peak]).
  auto reach_80_mib = [](CachingAllocator& a) {
    a.raw_free(alloc(a, 80 * kMB));
    a.empty_cache();
  };
  SUBCASE("without it the cache grows") {
    CachingAllocator a(p, AllocConf{});
    reach_80_mib(a);
    a.raw_free(alloc(a, 30 * kMB, 1));
    a.raw_free(alloc(a, 22 * kMB, 3));
    char* x = alloc(a, 24 * kMB, 2);
    CHECK(a.stats().num_provider_frees == 1);  // the 80 MiB one only
    CHECK(all(a.stats().reserved_bytes) == static_cast<int64_t>(76 * kMB));
    a.raw_free(x);
  }
  SUBCASE("with garbage_collection_threshold:0.5") {
    CachingAllocator a(p, parse_alloc_conf("garbage_collection_threshold:0.5"));
    reach_80_mib(a);
    a.raw_free(alloc(a, 30 * kMB, 1));  // cached first: the oldest
    a.raw_free(alloc(a, 22 * kMB, 3));  // reserved 52 MiB > 50: the next miss collects
    char* x = alloc(a, 24 * kMB, 2);
    MemoryStats s = a.stats();
    CHECK(s.num_provider_frees == 2);  // and of these only the 30 MiB segment: older than the average
    CHECK(all(s.reserved_bytes) == static_cast<int64_t>(46 * kMB));
    CHECK(s.num_sync_all_streams == 1);  // empty_cache's: unlike the OOM path, collecting does not synchronize
    a.raw_free(x);
  }
}

TEST_CASE("caching allocator: with caching off every request reserves and every free releases") {
  SimulatedProvider p(64 * kMB);
  AllocConf conf;
  conf.caching = false;
  CachingAllocator a(p, conf);
  char* x = alloc(a, 1000);
  char* y = alloc(a, 3 * kMB);
  CHECK(all(a.stats().reserved_bytes) == static_cast<int64_t>(1024 + 3 * kMB));
  a.record_stream(x, 1);
  a.raw_free(x);
  a.raw_free(y);
  CHECK(p.counters().releases == 1);  // x waits for stream 1
  p.complete_all(1);
  a.raw_free(alloc(a, 512));
  MemoryStats s = a.stats();
  CHECK(s.num_provider_allocs == 3);
  CHECK(s.num_provider_frees == 3);
  CHECK(p.counters().used_bytes == 0);
}

TEST_CASE("caching allocator: peak stats reset to the current values") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  std::vector<char*> xs;
  for (int i = 0; i < 5; ++i) xs.push_back(alloc(a, 1000));
  for (int i = 1; i < 5; ++i) a.raw_free(xs[i]);
  MemoryStats s = a.stats();
  CHECK(s.allocation[StatType::All].peak == 5);
  CHECK(s.allocated_bytes[StatType::Small].peak == 5 * 1024);
  a.reset_peak_stats();
  s = a.stats();
  CHECK(s.allocation[StatType::All].peak == 1);
  CHECK(s.allocated_bytes[StatType::All].peak == 1024);
  CHECK(s.allocation[StatType::All].allocated == 5);  // totals are not peaks: kept
  CHECK(s.allocation[StatType::All].freed == 4);
  a.raw_free(xs[0]);
}

TEST_CASE("caching allocator: empty_cache releases only segments with nothing in use") {
  SimulatedProvider p(256 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* keep = alloc(a, 1000);
  char* x = alloc(a, 5 * kMB);
  char* y = alloc(a, 30 * kMB);
  a.raw_free(x);
  a.raw_free(y);
  CHECK(all(a.stats().reserved_bytes) == static_cast<int64_t>(2 * kMB + 20 * kMB + 30 * kMB));
  a.empty_cache();
  CHECK(all(a.stats().reserved_bytes) == static_cast<int64_t>(2 * kMB));
  CHECK(p.counters().used_bytes == 2 * kMB);
  a.raw_free(keep);
  a.empty_cache();
  CHECK(p.counters().used_bytes == 0);
}
