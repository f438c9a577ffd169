// A reservation that would take the reserved total past the most ever reserved first gives back
// the large pool's wholly free segments (Note [Releasing before a new peak] in
// alloc/caching_segments.cpp); below that mark, and for what the note excludes, the cache is
// kept as PyTorch keeps it.
#include <doctest/doctest.h>

#include "alloc_test_util.h"
#include "anatomy/alloc/mem_pool.h"

using namespace anatomy_test;

namespace {

int64_t reserved(const CachingAllocator& a) { return all(a.stats().reserved_bytes); }

}  // namespace

TEST_CASE("release before a new peak: wholly free large segments go, the rest of the cache stays") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* small = alloc(a, 1000);      // a small-pool segment (2 MiB)
  char* whole = alloc(a, 30 * kMB);  // a 30 MiB segment
  char* busy = alloc(a, 12 * kMB);   // a 12 MiB segment
  char* front = alloc(a, 3 * kMB);   // a 20 MiB segment...
  char* live = alloc(a, 5 * kMB);    // ...holding this one too
  for (char* q : {small, whole, front}) a.raw_free(q);
  REQUIRE(reserved(a) == static_cast<int64_t>(64 * kMB));
  char* x = alloc(a, 40 * kMB);  // fits no cached block; 64 + 40 is a new peak
  const MemoryStats s = a.stats();
  CHECK(s.num_provider_frees == 1);  // the 30 MiB segment only
  CHECK(reserved(a) == static_cast<int64_t>((64 - 30 + 40) * kMB));
  CHECK(p.counters().used_bytes == (64 - 30 + 40) * kMB);
  CHECK(s.num_sync_all_streams == 0);
  Shadow shadow{{busy, 12 * kMB}, {live, 5 * kMB}, {x, 40 * kMB}};
  check_stats(a, p, shadow);
  check_segments(a, shadow);
  for (char* q : {busy, live, x}) a.raw_free(q);
}

TEST_CASE("release before a new peak: release_before_new_peak:False keeps PyTorch's policy, the cache kept") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, parse_alloc_conf("release_before_new_peak:False"));
  CHECK_FALSE(a.conf().release_before_new_peak);
  char* whole = alloc(a, 30 * kMB);
  a.raw_free(whole);
  char* x = alloc(a, 40 * kMB);  // a new peak: 30 + 40, the free 30 MiB segment still cached
  CHECK(a.stats().num_provider_frees == 0);
  CHECK(reserved(a) == static_cast<int64_t>(70 * kMB));
  Shadow shadow{{x, 40 * kMB}};
  check_stats(a, p, shadow);
  a.raw_free(x);
  // Turned on at run time, the next new peak gives back both wholly free segments.
  AllocConf on = a.conf();
  on.release_before_new_peak = true;
  a.set_conf(on);
  char* y = alloc(a, 80 * kMB);
  CHECK(a.stats().num_provider_frees == 2);
  CHECK(reserved(a) == static_cast<int64_t>(80 * kMB));
  a.raw_free(y);
}

TEST_CASE("release before a new peak: below the most ever reserved the cache is kept, reset peaks or not") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* x = alloc(a, 40 * kMB);
  char* y = alloc(a, 50 * kMB);  // 90 MiB reserved at once
  a.raw_free(x);
  a.raw_free(y);
  a.empty_cache();
  a.reset_peak_stats();                      // the stats' peak is 0 now; the allocator's mark stays 90 MiB
  a.raw_free(alloc(a, 30 * kMB));            // cached whole
  char* z = alloc(a, 40 * kMB);              // 30 + 40 <= 90: the cached segment stays
  CHECK(a.stats().num_provider_frees == 2);  // empty_cache's
  CHECK(reserved(a) == static_cast<int64_t>(70 * kMB));
  char* w = alloc(a, 30 * kMB);  // the cached one
  CHECK(reserved(a) == static_cast<int64_t>(70 * kMB));
  a.raw_free(w);
  char* v = alloc(a, 32 * kMB);  // 70 + 32 > 90: the free 30 MiB one goes first
  CHECK(a.stats().num_provider_frees == 3);
  CHECK(reserved(a) == static_cast<int64_t>(72 * kMB));
  for (char* q : {z, v}) a.raw_free(q);
}

TEST_CASE("release before a new peak: oversize segments (max_split_size_mb) stay for the requests that fit them") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, parse_alloc_conf("max_split_size_mb:40"));
  char* big = alloc(a, 50 * kMB);
  a.raw_free(big);
  char* x = alloc(a, 30 * kMB);  // below the limit: not served by the oversize block, which stays
  CHECK(a.stats().num_provider_frees == 0);
  CHECK(reserved(a) == static_cast<int64_t>(80 * kMB));
  CHECK(alloc(a, 45 * kMB) == big);
  a.raw_free(big);
  a.raw_free(x);
}

TEST_CASE("release before a new peak: nothing is given back while a route to a private pool is in force") {
  // A graph capture may be under way on the routed stream; a capture must not see a cudaFree.
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, AllocConf{});
  MemPool pool(a);
  a.raw_free(alloc(a, 30 * kMB));
  {
    UseMemPool route(pool, 1);
    char* x = alloc(a, 40 * kMB, 0);  // stream 0 is not routed, but a route is in force
    CHECK(a.stats().num_provider_frees == 0);
    CHECK(reserved(a) == static_cast<int64_t>(70 * kMB));
    a.raw_free(x);
  }
  char* y = alloc(a, 120 * kMB);  // no route: a new peak gives the free ones back
  CHECK(a.stats().num_provider_frees == 2);
  CHECK(reserved(a) == static_cast<int64_t>(120 * kMB));
  a.raw_free(y);
}

TEST_CASE("release before a new peak: a growing expandable segment leaves plain cached segments alone") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, AllocConf{});
  a.raw_free(alloc(a, 30 * kMB));  // a plain segment, cached whole
  a.set_conf(expandable_conf());
  char* x = alloc(a, 40 * kMB);  // maps pages of an expandable segment
  const MemoryStats s = a.stats();
  CHECK(s.num_provider_frees == 0);
  CHECK(s.num_provider_maps > 0);
  CHECK(reserved(a) == static_cast<int64_t>(70 * kMB));
  a.raw_free(x);
  a.empty_cache();
  CHECK(p.counters().used_bytes == 0);
}
