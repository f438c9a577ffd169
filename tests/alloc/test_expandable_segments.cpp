// Expandable segments (expandable_segments:True) on the simulated device: a stream's segment
// grows by mapping pages at its end instead of reserving new segments, its blocks stay
// contiguous so a growing-buffer pattern that fragments plain segments does not, empty_cache
// and the out-of-memory ladder unmap the free pages at the end, stats follow mapped bytes, a
// record_stream free still waits for its events, and a random run keeps every invariant.
// Unmapped simulated pages have no access, so a block handed out beyond the mapped part would
// crash these tests rather than pass them.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../core/test_util.h"
#include "alloc_test_util.h"

#include "anatomy/cuda.h"

using namespace anatomy::alloc;
using anatomy_test::all;
using anatomy_test::check_segments;
using anatomy_test::check_stats;
using anatomy_test::expandable_conf;
using anatomy_test::free_random_block;
using anatomy_test::Shadow;

namespace {

int64_t peak(const StatArray& s) { return s[StatType::All].peak; }
char* at(void* base, size_t offset) { return static_cast<char*>(base) + offset; }

}  // namespace

TEST_CASE("expandable segments: a stream's segment grows by mapping pages, not by reserving segments") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, expandable_conf());
  std::vector<void*> ptrs;
  for (int i = 0; i < 10; ++i) ptrs.push_back(a.raw_alloc(5 * kMB, 0));
  // One address range for the large pool of stream 0; 50 MiB in 20 MiB pages is 3 pages.
  SimulatedProvider::Counters c = p.counters();
  CHECK(c.reserves == 0);
  CHECK(c.address_reserves == 1);
  CHECK(c.maps == 3);
  CHECK(c.used_bytes == 60 * kMB);
  for (int i = 0; i < 10; ++i) CHECK(ptrs[i] == at(ptrs[0], i * 5 * kMB));  // contiguous, across pages
  std::vector<SegmentInfo> segs = a.segments();
  REQUIRE(segs.size() == 1);
  CHECK(segs[0].is_expandable);
  CHECK_FALSE(segs[0].is_small);
  CHECK(segs[0].address == ptrs[0]);
  CHECK(segs[0].size == 60 * kMB);  // what is mapped, not the reserved range
  CHECK(segs[0].blocks.size() == 11);
  MemoryStats s = a.stats();
  CHECK(all(s.segment) == 1);
  CHECK(all(s.reserved_bytes) == static_cast<int64_t>(60 * kMB));
  CHECK(s.num_provider_allocs == 0);
  CHECK(s.num_provider_maps == 3);

  // The small pool has its own segment of 2 MiB pages; another stream has its own segments.
  void* small = a.raw_alloc(1000, 0);
  void* other = a.raw_alloc(5 * kMB, 1);
  c = p.counters();
  CHECK(c.address_reserves == 3);
  CHECK(c.maps == 5);
  CHECK(a.stats().reserved_bytes[StatType::Small].current == static_cast<int64_t>(2 * kMB));
  CHECK(a.stats().reserved_bytes[StatType::Large].current == static_cast<int64_t>(80 * kMB));
  // A block after the mapped part of one page needs the next page only.
  void* big = a.raw_alloc(25 * kMB, 0);
  CHECK(big == at(ptrs[0], 50 * kMB));
  CHECK(p.counters().maps == 6);  // 75 MiB: 4 pages

  Shadow live;
  for (void* q : ptrs) live[static_cast<char*>(q)] = 5 * kMB;
  live[static_cast<char*>(small)] = 1000;
  live[static_cast<char*>(other)] = 5 * kMB;
  live[static_cast<char*>(big)] = 25 * kMB;
  check_stats(a, p, live);
  check_segments(a, live);
  for (auto& [q, n] : live) a.raw_free(q);
  a.empty_cache();
  c = p.counters();
  CHECK(c.used_bytes == 0);
  CHECK(c.address_releases == 3);
  CHECK(c.unmaps == c.maps);
  CHECK(a.segments().empty());
  check_stats(a, p, {});
}

TEST_CASE("expandable segments: a growing buffer grows one segment where plain ones are reserved anew") {
  // A buffer that grows by 12 MiB at a time, the old one freed once the new one exists (as a
  // growing KV cache or a concatenation loop does). In plain segments every larger buffer needs
  // a new segment, since the freed ones lie in separate segments and cannot merge: PyTorch's
  // policy keeps them all (16 * 17 / 2 * 12 MiB at the end); anatomy's gives the free ones back
  // before each reservation that sets a new peak (Note [Releasing before a new peak]), a provider
  // release and a reservation per size. In one expandable segment the freed buffers merge into
  // one free block that the next one fits in: pages are mapped, nothing reserved or released.
  auto run = [](const AllocConf& conf) {
    SimulatedProvider p(2048 * kMB);
    CachingAllocator a(p, conf);
    void* cur = a.raw_alloc(12 * kMB, 0);
    for (size_t i = 2; i <= 16; ++i) {
      void* next = a.raw_alloc(i * 12 * kMB, 0);
      for (size_t k = 0; k < i * 12 * kMB; k += kMB) static_cast<char*>(next)[k] = 1;  // its pages are mapped
      a.raw_free(cur);
      cur = next;
    }
    const MemoryStats s = a.stats();
    CHECK(s.num_ooms == 0);
    a.raw_free(cur);
    return s;
  };
  const MemoryStats plain = run(AllocConf{});
  const MemoryStats grown = run(expandable_conf());
  MESSAGE("peak reserved, plain: ", peak(plain.reserved_bytes) / static_cast<int64_t>(kMB),
          " MiB, expandable: ", peak(grown.reserved_bytes) / static_cast<int64_t>(kMB), " MiB");
  CHECK(plain.num_provider_allocs == 16);  // one segment per size
  CHECK(plain.num_provider_frees == 14);   // all but the last two buffers'
  // The two largest buffers, live at once.
  CHECK(peak(plain.reserved_bytes) == static_cast<int64_t>(12 * kMB * (15 + 16)));
  // Expandable: at most the two live buffers and the free space before them, in whole pages.
  CHECK(grown.num_provider_allocs == 0);
  CHECK(grown.num_provider_frees == 0);
  CHECK(peak(grown.reserved_bytes) <= static_cast<int64_t>(3 * 16 * 12 * kMB));
  CHECK(peak(grown.segment) == 1);
}

TEST_CASE("expandable segments: empty_cache unmaps the whole pages of the free block at the end") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, expandable_conf());
  a.record_memory_history(true, 100);
  void* first = a.raw_alloc(5 * kMB, 0);
  void* second = a.raw_alloc(30 * kMB, 0);
  CHECK(second == at(first, 5 * kMB));
  CHECK(all(a.stats().reserved_bytes) == static_cast<int64_t>(40 * kMB));
  a.raw_free(second);
  a.empty_cache();
  // The free block [5, 40) MiB holds the page [20, 40) whole: that page goes, [5, 20) stays.
  std::vector<SegmentInfo> segs = a.segments();
  REQUIRE(segs.size() == 1);
  CHECK(segs[0].size == 20 * kMB);
  REQUIRE(segs[0].blocks.size() == 2);
  CHECK(segs[0].blocks[1].size == 15 * kMB);
  CHECK_FALSE(segs[0].blocks[1].allocated);
  CHECK(all(a.stats().reserved_bytes) == static_cast<int64_t>(20 * kMB));
  CHECK(p.counters().unmaps == 1);
  CHECK(p.counters().used_bytes == 20 * kMB);
  check_segments(a, {{static_cast<char*>(first), 5 * kMB}});
  // It grows back from there: a 20 MiB block starts at 5 MiB and needs one more page.
  void* again = a.raw_alloc(20 * kMB, 0);
  CHECK(again == at(first, 5 * kMB));
  CHECK(p.counters().maps == 3);
  a.raw_free(again);
  a.raw_free(first);
  a.empty_cache();  // nothing left mapped: the range goes too
  CHECK(a.segments().empty());
  CHECK(p.counters().used_bytes == 0);
  CHECK(p.counters().address_releases == 1);
  check_stats(a, p, {});

  std::vector<std::string> actions;
  for (const TraceEntry& e : a.memory_snapshot().trace) {
    if (e.action == TraceAction::SegmentMap || e.action == TraceAction::SegmentUnmap) {
      actions.push_back(fmt::format("{} {}", to_string(e.action), e.size / kMB));
    }
  }
  CHECK(actions == std::vector<std::string>{"segment_map 20", "segment_map 20", "segment_unmap 20", "segment_map 20",
                                            "segment_unmap 40"});
}

TEST_CASE("expandable segments: the out-of-memory ladder unmaps other segments and a failed map changes nothing") {
  SimulatedProvider p(100 * kMB);
  CachingAllocator a(p, expandable_conf());
  a.raw_free(a.raw_alloc(60 * kMB, 0));  // 3 pages cached in stream 0's segment
  // Stream 1 needs 3 pages of its own: the third map fails, the two before are undone, the cache
  // is released (stream 0's segment unmapped and released) and the retry maps all three.
  void* big = a.raw_alloc(60 * kMB, 1);
  SimulatedProvider::Counters c = p.counters();
  CHECK(c.failed_maps == 1);
  CHECK(c.address_releases == 2);  // stream 0's range, and stream 1's first try
  CHECK(a.stats().num_alloc_retries == 1);
  CHECK(a.stats().num_sync_all_streams == 1);
  REQUIRE(a.segments().size() == 1);
  CHECK(a.segments()[0].stream == 1);
  check_stats(a, p, {{static_cast<char*>(big), 60 * kMB}});

  // Now nothing can be released: the request fails with the allocator as it was.
  const MemoryStats before = a.stats();
  EXPECT_ERROR(OutOfMemoryError, a.raw_alloc(60 * kMB, 1), "out of memory", "mapping up to 60.00 MiB more");
  c = p.counters();
  CHECK(c.used_bytes == 60 * kMB);
  CHECK(c.maps - c.unmaps == 3);
  CHECK(all(a.stats().reserved_bytes) == all(before.reserved_bytes));
  CHECK(all(a.stats().segment) == 1);
  CHECK(a.stats().num_ooms == 1);
  check_stats(a, p, {{static_cast<char*>(big), 60 * kMB}});
  // And it keeps working: 40 MiB is still there to map.
  void* rest = a.raw_alloc(40 * kMB, 1);
  CHECK(rest == at(big, 60 * kMB));
  a.raw_free(rest);
  a.raw_free(big);
  a.empty_cache();
  CHECK(p.counters().used_bytes == 0);
}

TEST_CASE("expandable segments: suggested by a plain OOM message, capped by per_process_memory_fraction") {
  SimulatedProvider p(100 * kMB);
  {
    CachingAllocator plain(p, AllocConf{});
    EXPECT_ERROR(OutOfMemoryError, plain.raw_alloc(200 * kMB, 0), "needing a 200.00 MiB segment",
                 "expandable_segments:True");
  }
  CachingAllocator a(p, expandable_conf("per_process_memory_fraction:0.5"));
  void* ok = a.raw_alloc(40 * kMB, 0);
  EXPECT_ERROR(OutOfMemoryError, a.raw_alloc(15 * kMB, 0), "per_process_memory_fraction");
  CHECK(p.counters().failed_maps == 0);  // refused before asking the provider
  a.raw_free(ok);
}

TEST_CASE("expandable segments: record_stream still defers reuse, at the end of a segment too") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, expandable_conf());
  void* first = a.raw_alloc(20 * kMB, 0);  // exactly one page: it is the segment's last block
  a.record_stream(first, 1);
  a.raw_free(first);
  // Waiting for stream 1: not reused, not merged, so the segment grows past it.
  void* second = a.raw_alloc(20 * kMB, 0);
  CHECK(second == at(first, 20 * kMB));
  CHECK(p.counters().maps == 2);
  std::vector<SegmentInfo> segs = a.segments();
  REQUIRE(segs.size() == 1);
  REQUIRE(segs[0].blocks.size() == 2);
  CHECK(segs[0].blocks[0].pending_free);
  p.complete_all(1);
  void* third = a.raw_alloc(20 * kMB, 0);  // processes the event: the first block is free again
  CHECK(third == first);
  CHECK(p.counters().maps == 2);
  a.raw_free(third);

  // A pending free at the end is not unmapped until empty_cache has synchronized.
  a.record_stream(second, 2);
  a.raw_free(second);
  CHECK(p.pending_events(2) == 1);
  a.empty_cache();
  CHECK(p.counters().used_bytes == 0);
  CHECK(a.segments().empty());
  check_stats(a, p, {});
}

TEST_CASE("expandable segments: a provider without virtual memory refuses the knob") {
  SimulatedProvider p(64 * kMB);
  p.set_supports_virtual_memory(false);
  EXPECT_ERROR(NotImplementedError, CachingAllocator(p, expandable_conf()), "expandable_segments:True",
               "virtual memory");
  CachingAllocator a(p, AllocConf{});
  EXPECT_ERROR(NotImplementedError, a.set_conf(expandable_conf()), "expandable_segments");
  CHECK_FALSE(a.conf().expandable_segments);
}

TEST_CASE("expandable segments: switching the knob at run time applies to new segments") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, AllocConf{});
  void* plain = a.raw_alloc(5 * kMB, 0);  // a plain 20 MiB segment
  a.set_conf(expandable_conf());
  void* grown = a.raw_alloc(30 * kMB, 0);  // no cached block fits: an expandable segment
  CHECK(p.counters().reserves == 1);
  CHECK(p.counters().address_reserves == 1);
  std::vector<SegmentInfo> segs = a.segments();
  REQUIRE(segs.size() == 2);
  CHECK(segs[0].is_expandable != segs[1].is_expandable);
  void* small = a.raw_alloc(12 * kMB, 0);  // fits only the plain segment's free 15 MiB
  CHECK(small == at(plain, 5 * kMB));
  a.set_conf(AllocConf{});
  a.raw_free(grown);
  void* reused = a.raw_alloc(30 * kMB, 0);  // the expandable segment's block is still cached memory
  CHECK(reused == grown);
  void* another = a.raw_alloc(30 * kMB, 0);  // but it no longer grows: a plain segment
  CHECK(p.counters().reserves == 2);
  CHECK(p.counters().maps == 2);
  for (void* q : {plain, small, reused, another}) a.raw_free(q);
  a.empty_cache();
  CHECK(p.counters().used_bytes == 0);
  check_stats(a, p, {});
}

TEST_CASE("expandable segments: the snapshot marks them and the summary counts the maps") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, expandable_conf());
  void* q = a.raw_alloc(25 * kMB, 0);
  const std::string json = to_json(a.memory_snapshot());
  CHECK(json.find("\"is_expandable\": true") != std::string::npos);
  CHECK(json.find(fmt::format("\"total_size\": {}", 40 * kMB)) != std::string::npos);
  CHECK(a.memory_summary().find("provider page maps (cuMemMap): 2, unmaps (cuMemUnmap): 0") != std::string::npos);
  a.raw_free(q);
}

namespace {

// Random allocations and frees of mixed sizes on three streams with record_stream, random event
// completion and an occasional empty_cache, checked against a shadow model after every step:
// the first and last byte of every block are written (an unmapped page would fault), blocks never
// overlap, every segment is walked every 1,000 steps, and all is given back at the end.
int64_t random_expandable_run(const AllocConf& conf, size_t capacity, int steps, uint32_t seed) {
  SimulatedProvider p(capacity);
  CachingAllocator a(p, conf);
  std::mt19937 rng(seed);
  Shadow live;
  std::vector<char*> order;
  int64_t requested = 0;
  auto size_of = [&]() -> size_t {
    uint32_t kind = rng() % 100;
    if (kind < 55) return 1 + rng() % (64 * 1024);
    if (kind < 70) return 1 + rng() % kSmallSize;
    if (kind < 96) return kSmallSize + 1 + rng() % (24 * kMB);
    return 1 + rng() % (64 * kMB);
  };
  for (int step = 0; step < steps; ++step) {
    if (live.empty() || (live.size() < 200 && rng() % 100 < 52)) {
      size_t n = size_of();
      StreamId s = static_cast<StreamId>(rng() % 3);
      char* ptr = nullptr;
      try {
        ptr = static_cast<char*>(a.raw_alloc(n, s));
      } catch (const anatomy::OutOfMemoryError&) {
        check_stats(a, p, live, requested);
        continue;
      }
      auto next = live.lower_bound(ptr);
      REQUIRE((next == live.end() || ptr + n <= next->first));
      if (next != live.begin()) REQUIRE(std::prev(next)->first + std::prev(next)->second <= ptr);
      ptr[0] = 1;
      ptr[n - 1] = 1;
      live[ptr] = n;
      requested += static_cast<int64_t>(n);
      order.push_back(ptr);
      if (rng() % 8 == 0) a.record_stream(ptr, static_cast<StreamId>(rng() % 3));
    } else {
      free_random_block(a, order, live, requested, rng);
    }
    if (rng() % 16 == 0) p.complete_all(static_cast<StreamId>(rng() % 3));
    if (step % 5000 == 4999) a.empty_cache();
    check_stats(a, p, live, requested);
    if (step % 1000 == 0) check_segments(a, live);
  }
  check_segments(a, live);
  for (char* ptr : order) a.raw_free(ptr);
  live.clear();
  a.empty_cache();
  const MemoryStats s = a.stats();
  CHECK(all(s.allocated_bytes) == 0);
  CHECK(all(s.inactive_split) == 0);
  CHECK(all(s.reserved_bytes) == 0);
  const SimulatedProvider::Counters c = p.counters();
  CHECK(c.used_bytes == 0);
  CHECK(c.live_events == 0);
  CHECK(c.address_reserves == c.address_releases);
  CHECK(c.maps == c.unmaps);
  CHECK(a.segments().empty());
  return s.num_ooms;
}

}  // namespace

TEST_CASE("expandable segments: 3e4 random steps keep the allocator's invariants") {
  CHECK(random_expandable_run(expandable_conf(), 2048 * kMB, 30000, 4321) == 0);
}

TEST_CASE("expandable segments: random steps near the memory limit, with garbage collection and max_split_size") {
  const int64_t ooms = random_expandable_run(
      expandable_conf("per_process_memory_fraction:0.25,garbage_collection_threshold:0.5,max_split_size_mb:24"),
      2048 * kMB, 20000, 17);
  CHECK(ooms > 0);
}
