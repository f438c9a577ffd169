// Expandable segments give back the free pages in the middle of a segment, not only at its end:
// empty_cache (and the out-of-memory ladder's release step) unmaps every whole page inside a free
// block, leaving an unmapped block (a hole), and a later request maps holes again before the
// segment grows. On the simulated device an unmapped page has no access, so a block handed out
// over a page that was not mapped again would crash these tests rather than pass them.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../core/test_util.h"
#include "alloc_test_util.h"
#include "random_allocator_run.h"

#include "anatomy/cuda.h"

using namespace anatomy::alloc;
using anatomy_test::all;
using anatomy_test::check_segments;
using anatomy_test::check_stats;
using anatomy_test::expandable_conf;
using anatomy_test::Shadow;

namespace {

char* at(void* base, size_t offset_mb) { return static_cast<char*>(base) + offset_mb * kMB; }

// Every check after every step: the stats against the device and the shadow, the walk, and the
// first and last byte of every live block written (an unmapped page would fault).
void check_all(const CachingAllocator& a, const SimulatedProvider& p, const Shadow& live) {
  check_stats(a, p, live);
  check_segments(a, live);
  for (const auto& [ptr, n] : live) {
    ptr[0] = 1;
    ptr[n - 1] = 1;
  }
}

// One segment's blocks as "offset:size:state" in MiB, for comparing layouts at a glance.
std::string layout(const SegmentInfo& seg) {
  std::string out;
  for (const BlockInfo& b : seg.blocks) {
    const char* state = b.unmapped ? "unmapped" : b.allocated ? "allocated" : b.pending_free ? "pending" : "free";
    out += fmt::format("{}{}:{}:{}", out.empty() ? "" : " ",
                       (static_cast<char*>(b.ptr) - static_cast<char*>(seg.address)) / kMB, b.size / kMB, state);
  }
  return out;
}

// The layout of the segment that starts at `base`.
std::string layout_at(const CachingAllocator& a, const void* base) {
  for (const SegmentInfo& seg : a.segments()) {
    if (seg.address == base) return layout(seg);
  }
  return "no segment";
}

// Writes `n` bytes of a pattern at `ptr` and reads them back: the block's pages are all mapped.
void fill_and_check(char* ptr, size_t n, char value) {
  std::memset(ptr, value, n);
  for (size_t i = 0; i < n; i += 4096) REQUIRE(ptr[i] == value);
  REQUIRE(ptr[n - 1] == value);
}

std::vector<std::string> map_events(const CachingAllocator& a, void* base) {
  std::vector<std::string> out;
  for (const TraceEntry& e : a.memory_snapshot().trace) {
    if (e.action == TraceAction::SegmentMap || e.action == TraceAction::SegmentUnmap) {
      out.push_back(
          fmt::format("{} {} {}", to_string(e.action),
                      (static_cast<int64_t>(e.address) - reinterpret_cast<int64_t>(base)) / static_cast<int64_t>(kMB),
                      e.size / kMB));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("expandable segments: empty_cache unmaps the free pages in the middle and a request maps them again") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, expandable_conf());
  a.record_memory_history(true, 100);
  Shadow live;
  // Large-pool pages are 20 MiB: A [0, 5), M [5, 75), B [75, 80) MiB map four pages.
  char* base = anatomy_test::alloc(a, 5 * kMB);
  char* m = anatomy_test::alloc(a, 70 * kMB);
  char* b = anatomy_test::alloc(a, 5 * kMB);
  REQUIRE(m == at(base, 5));
  REQUIRE(b == at(base, 75));
  live = {{base, 5 * kMB}, {m, 70 * kMB}, {b, 5 * kMB}};
  check_all(a, p, live);
  a.raw_free(m);
  live.erase(m);
  check_all(a, p, live);
  CHECK(all(a.stats().reserved_bytes) == static_cast<int64_t>(80 * kMB));

  // The free block [5, 75) holds the pages [20, 40) and [40, 60) whole: they go, one hole.
  a.empty_cache();
  check_all(a, p, live);
  MemoryStats s = a.stats();
  CHECK(all(s.reserved_bytes) == static_cast<int64_t>(40 * kMB));
  CHECK(s.num_provider_unmaps == 2);
  CHECK(all(s.segment) == 1);
  CHECK(all(s.inactive_split) == 2);  // [5, 20) and [60, 75): free, mapped, beside the hole
  CHECK(all(s.inactive_split_bytes) == static_cast<int64_t>(30 * kMB));
  CHECK(p.counters().used_bytes == 40 * kMB);
  std::vector<SegmentInfo> segs = a.segments();
  REQUIRE(segs.size() == 1);
  CHECK(segs[0].size == 40 * kMB);
  CHECK(segs[0].unmapped_size == 40 * kMB);
  CHECK(layout(segs[0]) == "0:5:allocated 5:15:free 20:40:unmapped 60:15:free 75:5:allocated");

  // 10 MiB fits the free block before the hole: no map.
  char* small = anatomy_test::alloc(a, 10 * kMB);
  CHECK(small == at(base, 5));
  CHECK(a.stats().num_provider_maps == 4);
  live[small] = 10 * kMB;
  check_all(a, p, live);
  a.raw_free(small);
  live.erase(small);

  // 30 MiB fits no free block: the free [5, 20) and the first page of the hole are mapped into
  // one block; the rest of the hole stays unmapped and the segment does not grow.
  char* c = anatomy_test::alloc(a, 30 * kMB);
  CHECK(c == at(base, 5));
  live[c] = 30 * kMB;
  fill_and_check(c, 30 * kMB, 7);
  check_all(a, p, live);
  s = a.stats();
  CHECK(s.num_provider_maps == 5);
  CHECK(all(s.reserved_bytes) == static_cast<int64_t>(60 * kMB));
  CHECK(layout(a.segments()[0]) == "0:5:allocated 5:30:allocated 35:5:free 40:20:unmapped 60:15:free 75:5:allocated");

  // 25 MiB: the free [35, 40), the whole rest of the hole and the free block after it join.
  char* d = anatomy_test::alloc(a, 25 * kMB);
  CHECK(d == at(base, 35));
  live[d] = 25 * kMB;
  fill_and_check(d, 25 * kMB, 9);
  check_all(a, p, live);
  CHECK(a.stats().num_provider_maps == 6);
  CHECK(all(a.stats().reserved_bytes) == static_cast<int64_t>(80 * kMB));
  CHECK(layout(a.segments()[0]) == "0:5:allocated 5:30:allocated 35:25:allocated 60:15:free 75:5:allocated");
  CHECK(p.counters().address_reserves == 1);
  CHECK(map_events(a, base) == std::vector<std::string>{"segment_map 0 20", "segment_map 20 60", "segment_unmap 20 40",
                                                        "segment_map 20 20", "segment_map 40 20"});

  for (auto& [ptr, n] : live) a.raw_free(ptr);
  live.clear();
  a.empty_cache();
  check_all(a, p, live);
  CHECK(a.segments().empty());
  CHECK(p.counters().used_bytes == 0);
  CHECK(p.counters().maps == p.counters().unmaps);
  CHECK(p.counters().address_releases == 1);
}

TEST_CASE("expandable segments: the segment's end moves back over a hole, and holes next to each other join") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, expandable_conf());
  char* base = anatomy_test::alloc(a, 5 * kMB);
  char* m = anatomy_test::alloc(a, 70 * kMB);
  char* b = anatomy_test::alloc(a, 5 * kMB);
  Shadow live{{base, 5 * kMB}, {b, 5 * kMB}};
  a.raw_free(m);
  a.empty_cache();
  REQUIRE(layout(a.segments()[0]) == "0:5:allocated 5:15:free 20:40:unmapped 60:15:free 75:5:allocated");
  // The last block freed: its page goes, then the hole before it (the end moves back to 20 MiB).
  a.raw_free(b);
  live.erase(b);
  a.empty_cache();
  check_all(a, p, live);
  CHECK(layout(a.segments()[0]) == "0:5:allocated 5:15:free");
  CHECK(all(a.stats().reserved_bytes) == static_cast<int64_t>(20 * kMB));
  CHECK(a.segments()[0].unmapped_size == 0);
  // It grows from there again, mapping at its end.
  char* e = anatomy_test::alloc(a, 50 * kMB);
  CHECK(e == at(base, 5));
  live[e] = 50 * kMB;
  fill_and_check(e, 50 * kMB, 3);
  check_all(a, p, live);

  // A free first block joins the hole after it: [0, 20) and [20, 40) become one hole.
  char* f = anatomy_test::alloc(a, 5 * kMB);  // [55, 60), keeps the segment's end in use
  live[f] = 5 * kMB;
  a.raw_free(e);
  live.erase(e);
  a.empty_cache();
  check_all(a, p, live);
  CHECK(layout(a.segments()[0]) == "0:5:allocated 5:15:free 20:20:unmapped 40:15:free 55:5:allocated");
  a.raw_free(base);
  live.erase(base);
  a.empty_cache();
  check_all(a, p, live);
  CHECK(layout(a.segments()[0]) == "0:40:unmapped 40:15:free 55:5:allocated");
  CHECK(all(a.stats().reserved_bytes) == static_cast<int64_t>(20 * kMB));
  // The last block goes: the hole at the start goes with it, and the segment's range.
  a.raw_free(f);
  live.erase(f);
  a.empty_cache();
  check_all(a, p, live);
  CHECK(a.segments().empty());
  CHECK(p.counters().used_bytes == 0);
  CHECK(p.counters().address_releases == 1);
}

TEST_CASE("expandable segments: a refused map of a hole leaves everything as it was") {
  // 120 MiB: stream 0 keeps 60 MiB mapped around two holes, stream 1 holds 40 MiB, so one
  // 20 MiB page is left.
  SimulatedProvider p(120 * kMB);
  CachingAllocator a(p, expandable_conf());
  a.record_memory_history(true, 100);
  char* base = anatomy_test::alloc(a, 5 * kMB);
  char* m1 = anatomy_test::alloc(a, 40 * kMB);
  char* c = anatomy_test::alloc(a, 5 * kMB);
  char* m2 = anatomy_test::alloc(a, 40 * kMB);
  char* b = anatomy_test::alloc(a, 5 * kMB);
  REQUIRE(b == at(base, 90));
  a.raw_free(m1);
  a.raw_free(m2);
  a.empty_cache();
  // Freed after the cache was emptied: [40, 60) stays mapped between the two holes.
  a.raw_free(c);
  Shadow live{{base, 5 * kMB}, {b, 5 * kMB}};
  char* x = anatomy_test::alloc(a, 40 * kMB, 1);
  live[x] = 40 * kMB;
  check_all(a, p, live);
  REQUIRE(layout_at(a, base) ==
          "0:5:allocated 5:15:free 20:20:unmapped 40:20:free 60:20:unmapped 80:10:free 90:5:allocated 95:5:free");
  REQUIRE(p.counters().used_bytes == 120 * kMB - 20 * kMB);

  // 70 MiB: the run [5, 80) needs both holes; the first maps, the second is refused and the first
  // is unmapped again. Growing at the end cannot help (the segment's range, the device's size,
  // has no room for 80 MiB more). The ladder's release step then unmaps the free page between the
  // holes (they join), and the retry maps two of the three pages it needs from that hole before
  // it is refused, and unmaps them again.
  const MemoryStats before = a.stats();
  const int64_t mapped_before = p.counters().maps - p.counters().unmaps, maps_before = p.counters().maps;
  const size_t events_before = map_events(a, base).size();
  EXPECT_ERROR(OutOfMemoryError, a.raw_alloc(70 * kMB, 0), "out of memory");
  check_all(a, p, live);
  const SimulatedProvider::Counters cnt = p.counters();
  CHECK(cnt.failed_maps == 2);         // one per try
  CHECK(cnt.maps == maps_before + 3);  // and unmapped again
  CHECK(cnt.maps - cnt.unmaps == mapped_before - 1);
  const MemoryStats s = a.stats();
  CHECK(s.num_ooms == 1);
  CHECK(s.num_alloc_retries == 1);
  CHECK(all(s.reserved_bytes) == all(before.reserved_bytes) - static_cast<int64_t>(20 * kMB));
  CHECK(all(s.allocated_bytes) == all(before.allocated_bytes));
  CHECK(all(s.segment) == 2);
  CHECK(layout_at(a, base) == "0:5:allocated 5:15:free 20:60:unmapped 80:10:free 90:5:allocated 95:5:free");
  // No map took effect; the only unmap is the ladder's.
  CHECK(map_events(a, base).size() == events_before + 1);
  CHECK(map_events(a, base).back() == "segment_unmap 40 20");

  // The same request fails again and changes nothing at all now (nothing is left to release).
  const MemoryStats settled = a.stats();
  const std::string settled_layout = layout_at(a, base);
  EXPECT_ERROR(OutOfMemoryError, a.raw_alloc(70 * kMB, 0), "out of memory");
  check_all(a, p, live);
  CHECK(layout_at(a, base) == settled_layout);
  CHECK(all(a.stats().reserved_bytes) == all(settled.reserved_bytes));
  CHECK(all(a.stats().inactive_split) == all(settled.inactive_split));
  CHECK(all(a.stats().inactive_split_bytes) == all(settled.inactive_split_bytes));
  CHECK(p.counters().maps - p.counters().unmaps == mapped_before - 1);

  // Once stream 1's block is freed, the ladder releases its segment and the retry maps the hole.
  a.raw_free(x);
  live.erase(x);
  char* y = anatomy_test::alloc(a, 70 * kMB, 0);
  CHECK(y == at(base, 5));
  live[y] = 70 * kMB;
  fill_and_check(y, 70 * kMB, 5);
  check_all(a, p, live);
  // The hole mapped whole joins the free [80, 90) after it.
  CHECK(layout_at(a, base) == "0:5:allocated 5:70:allocated 75:15:free 90:5:allocated 95:5:free");
  for (auto& [ptr, n] : live) a.raw_free(ptr);
  live.clear();
  a.empty_cache();
  check_all(a, p, live);
  CHECK(p.counters().used_bytes == 0);
  CHECK(p.counters().maps == p.counters().unmaps);
}

TEST_CASE("expandable segments: unmapped blocks in the snapshot's JSON and picture, and in the summary") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, expandable_conf());
  char* base = anatomy_test::alloc(a, 5 * kMB);
  char* m = anatomy_test::alloc(a, 70 * kMB);
  char* b = anatomy_test::alloc(a, 5 * kMB);
  a.raw_free(m);
  a.empty_cache();
  const MemorySnapshot snap = a.memory_snapshot();
  REQUIRE(snap.segments.size() == 1);
  CHECK(block_state(snap.segments[0].blocks[2]) == "unmapped");
  const std::string json = to_json(snap);
  CHECK(json.find(fmt::format("\"total_size\": {}", 40 * kMB)) != std::string::npos);
  CHECK(json.find(fmt::format("\"unmapped_size\": {}", 40 * kMB)) != std::string::npos);
  CHECK(json.find(fmt::format("\"address\": {}, \"size\": {}, \"requested_size\": 0, \"state\": \"unmapped\"",
                              reinterpret_cast<uintptr_t>(at(base, 20)), 40 * kMB)) != std::string::npos);
  const std::string svg = snapshot_to_svg(snap);
  CHECK(svg.find("url(#unmapped)") != std::string::npos);  // the hatched range
  CHECK(svg.find("40.00 MiB, unmapped") != std::string::npos);
  CHECK(svg.find("40.00 MiB mapped, +40.00 MiB unmapped") != std::string::npos);  // the label on hover
  CHECK(a.memory_summary().find("provider page maps (cuMemMap): 4, unmaps (cuMemUnmap): 2") != std::string::npos);
  a.raw_free(base);
  a.raw_free(b);
}

namespace {

anatomy_test::RandomRunResult expandable_random_run(const AllocConf& conf, int steps, uint32_t seed) {
  SimulatedProvider p(2048 * kMB);
  CachingAllocator a(p, conf);
  anatomy_test::RandomRunOptions o;
  o.steps = steps;
  o.seed = seed;
  o.empty_cache_every = 700;  // often, so that holes are made, mapped again and released
  o.walk_every = 200;
  anatomy_test::SimulatedRunDevice device(p, o.streams);
  const anatomy_test::RandomRunResult r = random_allocator_run(a, device, o);
  CHECK(p.counters().maps == p.counters().unmaps);
  CHECK(p.counters().address_reserves == p.counters().address_releases);
  return r;
}

}  // namespace

TEST_CASE("expandable segments: the randomized suite with empty_cache every 700 steps") {
  const anatomy_test::RandomRunResult r = expandable_random_run(expandable_conf(), 30000, 2024);
  CHECK(r.ooms == 0);
  CHECK(r.unmapped_seen > 0);  // the walks did meet holes
  MESSAGE("unmapped blocks seen by the walks: ", r.unmapped_seen);
}

TEST_CASE("expandable segments: the randomized suite near the memory limit, where maps of holes are refused") {
  const anatomy_test::RandomRunResult r = expandable_random_run(
      expandable_conf("per_process_memory_fraction:0.25,garbage_collection_threshold:0.5,max_split_size_mb:24"), 20000,
      11);
  CHECK(r.ooms > 0);
  CHECK(r.unmapped_seen > 0);
}
