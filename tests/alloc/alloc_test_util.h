// Checks shared by the caching allocator tests: stats that must agree with each other (over any
// provider) and with the simulated provider, and a walk over every segment proving blocks tile it, free neighbours
// are merged and nothing is lost.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "anatomy/alloc/alloc_conf.h"
#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/simulated_provider.h"

namespace anatomy_test {

using namespace anatomy::alloc;

// What the test believes is allocated: pointer -> requested bytes.
using Shadow = std::map<char*, size_t>;

inline char* alloc(CachingAllocator& a, size_t n, StreamId s = 0) { return static_cast<char*>(a.raw_alloc(n, s)); }

// Settings with expandable segments on, plus `extra` ("key:value,...").
inline AllocConf expandable_conf(const std::string& extra = "") {
  return parse_alloc_conf("expandable_segments:True" + (extra.empty() ? "" : "," + extra));
}

// A stat's current value over all pools.
inline int64_t all(const StatArray& s) { return s[StatType::All].current; }

// The free step of the random runs: frees the block at a random place of `order` (the blocks
// allocated and not yet freed, in no particular order) with raw_free, and keeps the shadow and
// the requested-bytes total in step. Returns the freed pointer.
template <typename Rng>
char* free_random_block(CachingAllocator& a, std::vector<char*>& order, Shadow& live, int64_t& requested, Rng& rng) {
  const size_t i = rng() % order.size();
  char* ptr = order[i];
  order[i] = order.back();
  order.pop_back();
  a.raw_free(ptr);
  requested -= static_cast<int64_t>(live[ptr]);
  live.erase(ptr);
  return ptr;
}

// Cheap checks, run after every step: collected as text and asserted once, because a million
// doctest assertions cost seconds in a Debug build. `requested` is the shadow's byte total.
// These hold over any provider, for an allocator that started empty.
inline std::string allocator_stats_problems(MemoryStats s, const Shadow& live, int64_t requested) {
  std::string bad;
  auto expect = [&](bool ok, const char* what) {
    if (!ok) bad += std::string(bad.empty() ? "" : "; ") + what;
  };
  expect(s.allocation[StatType::All].current == static_cast<int64_t>(live.size()), "allocation == live blocks");
  expect(s.requested_bytes[StatType::All].current == requested, "requested_bytes == requested");
  // Expandable segments (counted once per address range) are checked against the simulated device.
  if (s.num_provider_maps == 0) {
    expect(s.segment[StatType::All].current == s.num_provider_allocs - s.num_provider_frees,
           "segments == provider allocs - frees");
  }
  expect(s.active_bytes[StatType::All].current >= s.allocated_bytes[StatType::All].current, "active >= allocated");
  expect(s.allocated_bytes[StatType::All].current >= requested, "allocated >= requested");
  s.for_each_array([&](StatArray& arr) {
    expect(arr[StatType::All].current == arr[StatType::Small].current + arr[StatType::Large].current,
           "all == small + large");
    expect(arr[StatType::All].peak >= arr[StatType::All].current, "peak >= current");
    expect(arr[StatType::All].allocated - arr[StatType::All].freed == arr[StatType::All].current,
           "allocated - freed == current");
  });
  return bad;
}

inline void check_allocator_stats(const CachingAllocator& a, const Shadow& live, int64_t requested) {
  std::string bad = allocator_stats_problems(a.stats(), live, requested);
  REQUIRE_MESSAGE(bad.empty(), bad);
}

// The same, and the stats agree with what the simulated device counted.
inline void check_stats(const CachingAllocator& a, const SimulatedProvider& p, const Shadow& live, int64_t requested) {
  MemoryStats s = a.stats();
  SimulatedProvider::Counters c = p.counters();
  std::string bad = allocator_stats_problems(s, live, requested);
  auto expect = [&](bool ok, const char* what) {
    if (!ok) bad += std::string(bad.empty() ? "" : "; ") + what;
  };
  expect(s.reserved_bytes[StatType::All].current == static_cast<int64_t>(c.used_bytes), "reserved == provider used");
  expect(s.num_provider_allocs == c.reserves, "provider allocs");
  expect(s.num_provider_frees == c.releases, "provider frees");
  // An expandable segment is one address range however many pages it has mapped.
  expect(s.segment[StatType::All].current == c.reserves - c.releases + c.address_reserves - c.address_releases,
         "segments == live reservations");
  expect(s.num_provider_maps == c.maps && s.num_provider_unmaps == c.unmaps, "provider maps and unmaps");
  REQUIRE_MESSAGE(bad.empty(), bad);
}

inline void check_stats(const CachingAllocator& a, const SimulatedProvider& p, const Shadow& live) {
  int64_t requested = 0;
  for (auto& [ptr, n] : live) requested += static_cast<int64_t>(n);
  check_stats(a, p, live, requested);
}

// The full walk: every segment is tiled by its blocks, no two free blocks touch (nor two
// unmapped ones, and a segment does not end in one), the allocated blocks are exactly the live
// ones, and the stats equal what the walk counts.
inline void check_segments(const CachingAllocator& a, const Shadow& live) {
  MemoryStats s = a.stats();
  int64_t reserved = 0, allocated = 0, active = 0, n_allocated = 0, n_active = 0, n_split = 0, split_bytes = 0;
  for (const SegmentInfo& seg : a.segments()) {
    reserved += static_cast<int64_t>(seg.size);
    char* expect = static_cast<char*>(seg.address);
    bool prev_free = false, prev_unmapped = false;
    size_t mapped = 0, unmapped = 0;
    for (const BlockInfo& b : seg.blocks) {
      REQUIRE(b.ptr == expect);
      REQUIRE(b.size % kMinBlockSize == 0);
      expect += b.size;
      (b.unmapped ? unmapped : mapped) += b.size;
      REQUIRE_FALSE((b.unmapped && (!seg.is_expandable || b.allocated || b.pending_free || prev_unmapped)));
      prev_unmapped = b.unmapped;
      bool is_free = !b.allocated && !b.pending_free && !b.unmapped;
      REQUIRE_FALSE((is_free && prev_free));  // merging left two free neighbours apart
      prev_free = is_free;
      if (b.unmapped) continue;
      if (b.allocated) {
        auto it = live.find(static_cast<char*>(b.ptr));
        REQUIRE(it != live.end());
        REQUIRE(b.requested == it->second);
        allocated += static_cast<int64_t>(b.size);
        ++n_allocated;
      }
      if (!is_free) {
        active += static_cast<int64_t>(b.size);
        ++n_active;
      } else if (seg.blocks.size() > 1) {
        split_bytes += static_cast<int64_t>(b.size);
        ++n_split;
      }
    }
    REQUIRE_FALSE(prev_unmapped);  // the end of an expandable segment moves back over a hole
    REQUIRE(mapped == seg.size);
    REQUIRE(unmapped == seg.unmapped_size);
  }
  REQUIRE(n_allocated == static_cast<int64_t>(live.size()));
  REQUIRE(s.reserved_bytes[StatType::All].current == reserved);
  REQUIRE(s.allocated_bytes[StatType::All].current == allocated);
  REQUIRE(s.active_bytes[StatType::All].current == active);
  REQUIRE(s.active[StatType::All].current == n_active);
  REQUIRE(s.inactive_split[StatType::All].current == n_split);
  REQUIRE(s.inactive_split_bytes[StatType::All].current == split_bytes);
}

}  // namespace anatomy_test
