// Which free block a request gets must not depend on where the device put the segments (Note
// [Free blocks in segment order] in alloc/caching_block.h): the simulated device scatters
// its segments over a large address range (SimulatedProvider::scatter_segments), and the
// allocator's choices, read as (which segment, in the order they were made; offset in it), and
// its peaks are the same for every placement.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "alloc_test_util.h"
#include "anatomy/anatomy.h"
#include "anatomy/testing/alloc_trace.h"

using namespace anatomy_test;

namespace {

// Where an allocation landed, independently of addresses: its segment's number in the order
// the replay first saw segments, and its offset in that segment.
struct Place {
  size_t segment;
  size_t offset;
  bool operator==(const Place&) const = default;
};

struct Layout {
  std::vector<Place> places;  // per allocation of the trace, in order
  int64_t peak_reserved = 0;
  int64_t peak_allocated = 0;
};

// Replays `trace` and reads, right after each allocation, the segment that holds it. An
// allocation that reserved a segment is the first in it (a new segment is split from its
// front), so that is when a segment gets its number, also when it lies where a released one did.
Layout replay_layout(const anatomy::testing::AllocTrace& trace, std::optional<uint64_t> scatter_seed) {
  SimulatedProvider p(16 * 1024 * kMB);
  if (scatter_seed) p.scatter_segments(*scatter_seed);
  CachingAllocator a(p, AllocConf{});
  Layout layout;
  std::map<char*, size_t> numbers;  // segment start -> its number
  size_t segments_seen = 0;
  std::vector<char*> ptrs;
  for (const anatomy::testing::AllocTraceEvent& e : trace) {
    if (!e.is_alloc) {
      a.raw_free(ptrs[e.id]);
      continue;
    }
    const int64_t reserves = p.counters().reserves;
    char* ptr = alloc(a, e.size);
    ptrs.resize(std::max<size_t>(ptrs.size(), e.id + 1));
    ptrs[e.id] = ptr;
    char* start = nullptr;
    for (const SegmentInfo& s : a.segments()) {
      char* base = static_cast<char*>(s.address);
      if (base <= ptr && ptr < base + s.size) start = base;
    }
    REQUIRE(start != nullptr);
    if (p.counters().reserves != reserves) numbers[start] = segments_seen++;
    REQUIRE(numbers.contains(start));
    layout.places.push_back({numbers[start], static_cast<size_t>(ptr - start)});
  }
  const MemoryStats s = a.stats();
  layout.peak_reserved = s.reserved_bytes[StatType::All].peak;
  layout.peak_allocated = s.allocated_bytes[StatType::All].peak;
  return layout;
}

}  // namespace

TEST_CASE("segment order: scattered segments are usable, apart, and given back") {
  SimulatedProvider p(256 * kMB);
  p.scatter_segments(3);
  std::vector<char*> segs;
  for (int i = 0; i < 8; ++i) {
    char* s = static_cast<char*>(p.reserve(20 * kMB));
    REQUIRE(s != nullptr);
    s[0] = 1;
    s[20 * kMB - 1] = 1;  // every byte of it is memory
    segs.push_back(s);
  }
  for (size_t i = 0; i < segs.size(); ++i) {
    for (size_t j = i + 1; j < segs.size(); ++j)
      CHECK((segs[i] + 20 * kMB <= segs[j] || segs[j] + 20 * kMB <= segs[i]));
  }
  CHECK(p.reserve(100 * kMB) == nullptr);  // the capacity still holds: 160 + 100 > 256
  for (char* s : segs) p.release(s, 20 * kMB);
  CHECK(p.counters().used_bytes == 0);
  CHECK_THROWS_AS(p.scatter_segments(4), anatomy::ValueError);  // once only
}

TEST_CASE("segment order: scattering after the first reservation is an error") {
  SimulatedProvider p(64 * kMB);
  void* s = p.reserve(2 * kMB);
  CHECK_THROWS_AS(p.scatter_segments(1), anatomy::ValueError);
  p.release(s, 2 * kMB);
}

TEST_CASE("segment order: of two free blocks of one size the older segment's is taken, wherever it lies") {
  // Two 20 MiB segments, each with two 9 MiB blocks in use and a free 2 MiB rest; which of them
  // lies lower depends on the seed. PyTorch's policy takes the lower one's rest.
  for (uint64_t seed = 0; seed < 16; ++seed) {
    CAPTURE(seed);
    SimulatedProvider p(1024 * kMB);
    p.scatter_segments(seed);
    CachingAllocator a(p, AllocConf{});
    std::vector<char*> in_use;
    for (int i = 0; i < 4; ++i) in_use.push_back(alloc(a, 9 * kMB));
    REQUIRE(p.counters().reserves == 2);
    char* rest = alloc(a, 2 * kMB);
    CHECK(rest == in_use[0] + 18 * kMB);
    in_use.push_back(rest);
    for (char* q : in_use) a.raw_free(q);
  }
}

TEST_CASE("segment order: a training trace lands the same way on every placement of its segments") {
  anatomy::testing::TransformerTraceConfig config;
  config.layers = 3;
  config.hidden = 512;
  config.seq_lens = {256, 192, 320, 224};
  const anatomy::testing::AllocTrace trace = anatomy::testing::transformer_trace(config);
  const Layout host = replay_layout(trace, std::nullopt);
  for (uint64_t seed = 0; seed < 6; ++seed) {
    CAPTURE(seed);
    const Layout scattered = replay_layout(trace, seed);
    CHECK(scattered.peak_reserved == host.peak_reserved);
    CHECK(scattered.peak_allocated == host.peak_allocated);
    CHECK(scattered.places == host.places);
  }
}
