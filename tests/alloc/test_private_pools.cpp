// Private pools of the caching allocator on the simulated device: routing by stream filter,
// isolation from the ordinary pools both ways, sharing, lifetime (a pool outlives its handles
// while it holds allocated blocks, and its memory becomes ordinary cache after), per-pool stats,
// the summary and snapshot, errors, the OOM ladder with live and dead pools, routing from several
// threads, and a random run checked against a model of pools, routes and blocks.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "../core/test_util.h"
#include "alloc_test_util.h"
#include "anatomy/alloc/mem_pool.h"
#include "anatomy/cuda.h"

using namespace anatomy::alloc;
using anatomy_test::all;
using anatomy_test::alloc;
using anatomy_test::check_segments;
using anatomy_test::check_stats;
using anatomy_test::free_random_block;
using anatomy_test::Shadow;

namespace {

// The pool of the segment holding `ptr` (found by walking segments()).
PoolId pool_of(const CachingAllocator& a, const void* ptr) {
  for (const SegmentInfo& seg : a.segments()) {
    const char* begin = static_cast<const char*>(seg.address);
    if (ptr >= begin && ptr < begin + seg.size) return seg.pool;
  }
  FAIL("pointer in no segment");
  return {};
}

bool exists(const CachingAllocator& a, PoolId id) {
  std::vector<PoolStats> pools = a.pools();
  return std::any_of(pools.begin(), pools.end(), [&](const PoolStats& p) { return p.id == id; });
}

}  // namespace

TEST_CASE("caching allocator private pools: a stream filter routes allocations, and ending the route stops it") {
  SimulatedProvider p(256 * kMB);
  CachingAllocator a(p, AllocConf{});
  PoolId pool = a.create_pool();
  CHECK_FALSE(pool.is_default());
  a.begin_allocate_to_pool(pool, [](StreamId s) { return s == 1; });
  char* in_small = alloc(a, 1000, 1);
  char* in_large = alloc(a, 3 * kMB, 1);
  char* out = alloc(a, 1000, 0);  // another stream: the ordinary pool
  CHECK(pool_of(a, in_small) == pool);
  CHECK(pool_of(a, in_large) == pool);
  CHECK(pool_of(a, out).is_default());
  PoolStats ps = a.pool_stats(pool);
  CHECK(ps.use_count == 2);  // the creator and the route
  CHECK(ps.routing);
  CHECK(ps.segments == 2);
  CHECK(ps.reserved_bytes == static_cast<int64_t>(kSmallBuffer + kLargeBuffer));
  CHECK(ps.allocations == 2);
  CHECK(ps.allocated_bytes == static_cast<int64_t>(1024 + 3 * kMB));
  a.end_allocate_to_pool(pool);
  CHECK(a.pool_stats(pool).use_count == 1);
  CHECK_FALSE(a.pool_stats(pool).routing);
  char* after = alloc(a, 1000, 1);
  CHECK(pool_of(a, after).is_default());
  CHECK(a.pool_stats(pool).allocations == 2);

  SUBCASE("the first route that accepts wins") {
    PoolId second = a.create_pool();
    a.begin_allocate_to_pool(pool, [](StreamId s) { return s >= 1; });
    a.begin_allocate_to_pool(second, [](StreamId s) { return s >= 0; });
    char* x = alloc(a, 1000, 2);
    char* y = alloc(a, 1000, 0);
    CHECK(pool_of(a, x) == pool);
    CHECK(pool_of(a, y) == second);
    a.end_allocate_to_pool(pool);
    char* z = alloc(a, 1000, 2);  // now only the second route is in force
    CHECK(pool_of(a, z) == second);
    a.end_allocate_to_pool(second);
    for (char* q : {x, y, z}) a.raw_free(q);
    a.release_pool(second);
  }
  SUBCASE("UseMemPool routes this thread's allocate() on its current stream") {
    MemPool handle(a, pool);  // a second user of the same pool
    SimulatedProvider::set_current_stream(2);
    anatomy::DataPtr routed, other;
    {
      UseMemPool route(handle, 2);
      routed = a.allocate(100);
      SimulatedProvider::set_current_stream(0);
      other = a.allocate(100);  // stream 0: not this route's
      SimulatedProvider::set_current_stream(2);
    }
    anatomy::DataPtr later = a.allocate(100);
    SimulatedProvider::set_current_stream(0);
    CHECK(pool_of(a, routed.get()) == pool);
    CHECK(pool_of(a, other.get()).is_default());
    CHECK(pool_of(a, later.get()).is_default());
    std::thread([&] {  // another thread's allocations on the routed stream are not routed
      SimulatedProvider::set_current_stream(2);
      UseMemPool route(handle, 2);  // ...unless it routes them itself
      anatomy::DataPtr d = a.allocate(100);
      CHECK(pool_of(a, d.get()) == pool);
    })
        .join();
    std::thread([&] {
      SimulatedProvider::set_current_stream(2);
      std::optional<anatomy::DataPtr> d;
      {
        UseMemPool route(handle);  // every stream of the thread
        d = a.allocate(100);
        SimulatedProvider::set_current_stream(1);
        CHECK(pool_of(a, a.allocate(100).get()) == pool);
      }
      CHECK(pool_of(a, d->get()) == pool);
      CHECK(pool_of(a, a.allocate(100).get()).is_default());
    }).join();
  }
  for (char* q : {in_small, in_large, out, after}) a.raw_free(q);
  a.release_pool(pool);
  CHECK(a.pools().empty());
  a.empty_cache();
  CHECK(p.counters().used_bytes == 0);
}

TEST_CASE(
    "caching allocator private pools: a pool's freed block stays in it, and an ordinary free block is not used by it") {
  SimulatedProvider p(256 * kMB);
  CachingAllocator a(p, AllocConf{});
  MemPool pool(a);
  const auto in_pool = [&](StreamId s) { return s == 0; };
  SUBCASE("a pool block freed is reused by the pool, not outside it") {
    a.begin_allocate_to_pool(pool.id(), in_pool);
    char* x = alloc(a, 1000);
    char* big = alloc(a, 5 * kMB);
    a.raw_free(x);
    a.raw_free(big);
    a.end_allocate_to_pool(pool.id());
    CHECK(a.pool_stats(pool.id()).segments == 2);
    char* y = alloc(a, 1000);
    char* big2 = alloc(a, 5 * kMB);
    CHECK(y != x);
    CHECK(big2 != big);
    CHECK(p.counters().reserves == 4);  // two ordinary segments of their own
    a.begin_allocate_to_pool(pool.id(), in_pool);
    CHECK(alloc(a, 1000) == x);
    CHECK(alloc(a, 5 * kMB) == big);
    a.end_allocate_to_pool(pool.id());
    CHECK(p.counters().reserves == 4);
    for (char* q : {x, big, y, big2}) a.raw_free(q);
  }
  SUBCASE("an ordinary free block is not used by the pool") {
    char* y = alloc(a, 1000);
    char* big = alloc(a, 5 * kMB);
    a.raw_free(y);
    a.raw_free(big);
    a.begin_allocate_to_pool(pool.id(), in_pool);
    char* x = alloc(a, 1000);
    char* big2 = alloc(a, 5 * kMB);
    a.end_allocate_to_pool(pool.id());
    CHECK(x != y);
    CHECK(big2 != big);
    CHECK(p.counters().reserves == 4);
    CHECK(pool_of(a, x) == pool.id());
    CHECK(pool_of(a, big2) == pool.id());
    a.raw_free(x);
    a.raw_free(big2);
  }
  check_segments(a, {});
  MemoryStats s = a.stats();
  CHECK(all(s.allocation) == 0);
  CHECK(all(s.inactive_split) == 0);
}

TEST_CASE("caching allocator private pools: two users of one pool allocate from the same segments") {
  SimulatedProvider p(256 * kMB);
  CachingAllocator a(p, AllocConf{});
  std::optional<MemPool> first(std::in_place, a);
  MemPool second = *first;  // a copy shares the pool
  CHECK(second.id() == first->id());
  CHECK(a.pool_stats(first->id()).use_count == 2);
  char* x = nullptr;
  {
    UseMemPool route(*first, 0);
    x = alloc(a, 4000);
    a.raw_free(x);
  }
  first.reset();  // one user left: the pool and its cached block stay
  CHECK(a.pool_stats(second.id()).use_count == 1);
  {
    UseMemPool route(second, 0);
    CHECK(alloc(a, 4000) == x);
  }
  CHECK(p.counters().reserves == 1);
  MemPool third(a, second.id());  // sharing by id, as a graph captured into another's pool
  CHECK(a.pool_stats(second.id()).use_count == 2);
  MemPool moved = std::move(third);
  CHECK(third.id().is_default());
  CHECK(a.pool_stats(second.id()).use_count == 2);  // a move hands the use over
  EXPECT_ERROR(ValueError, (void)third.stats(), "moved from");
  a.raw_free(x);
}

TEST_CASE(
    "caching allocator private pools: a pool lives while its blocks are allocated, then its memory is ordinary cache") {
  SimulatedProvider p(256 * kMB);
  CachingAllocator a(p, AllocConf{});
  PoolId id;
  char *small_block = nullptr, *large_block = nullptr, *kept = nullptr;
  {
    MemPool pool(a);
    id = pool.id();
    UseMemPool route(pool, 0);
    small_block = alloc(a, 1000);
    large_block = alloc(a, 3 * kMB);
    kept = alloc(a, 18 * kMB);  // too big for the 17 MiB tail: a segment of its own, freed below
    a.raw_free(kept);
  }
  // The handle and the route are gone: the wholly free 18 MiB segment became ordinary cache, and
  // the pool stays for its two allocated blocks.
  REQUIRE(exists(a, id));
  PoolStats ps = a.pool_stats(id);
  CHECK(ps.use_count == 0);
  CHECK(ps.allocations == 2);
  CHECK(ps.segments == 2);
  CHECK(ps.reserved_bytes == static_cast<int64_t>(kSmallBuffer + kLargeBuffer));
  CHECK(alloc(a, 18 * kMB) == kept);  // an ordinary request takes it
  a.raw_free(kept);
  // Nobody can route to or share it again.
  EXPECT_ERROR(ValueError, a.retain_pool(id), "retain_pool", "private pool", "was released", "2 of its blocks");
  EXPECT_ERROR(ValueError, a.begin_allocate_to_pool(id, current_thread()), "begin_allocate_to_pool", "was released");
  EXPECT_ERROR(ValueError, a.release_pool(id), "release_pool", "was released");
  CHECK(a.pool_stats(id).use_count == 0);

  a.record_stream(small_block, 1);
  a.raw_free(small_block);  // pending stream 1's work: the pool keeps its small segment
  CHECK(a.pool_stats(id).segments == 2);
  a.raw_free(large_block);  // its segment is whole again: ordinary cache
  CHECK(a.pool_stats(id).segments == 1);
  const int64_t reserves = p.counters().reserves;
  CHECK(alloc(a, 19 * kMB) == large_block);  // reused by an ordinary request, no new reservation
  CHECK(p.counters().reserves == reserves);
  a.raw_free(large_block);
  p.complete_all(1);
  a.raw_free(a.raw_alloc(1, 5));  // processes the event: the last block is free, the pool goes
  CHECK_FALSE(exists(a, id));
  EXPECT_ERROR(ValueError, (void)a.pool_stats(id), "pool_stats", "was released");
  for (const SegmentInfo& seg : a.segments()) CHECK(seg.pool.is_default());
  a.empty_cache();
  CHECK(all(a.stats().reserved_bytes) == 0);
  CHECK(p.counters().used_bytes == 0);

  SUBCASE("a pool with nothing allocated goes with its last user, its cache with it") {
    PoolId other = a.create_pool();
    a.begin_allocate_to_pool(other, current_thread());
    a.raw_free(alloc(a, 1000));
    a.end_allocate_to_pool(other);
    CHECK(a.pool_stats(other).reserved_bytes == static_cast<int64_t>(kSmallBuffer));
    a.empty_cache();  // a live pool's cache is not released
    CHECK(p.counters().used_bytes == kSmallBuffer);
    a.release_pool(other);
    CHECK_FALSE(exists(a, other));
    a.empty_cache();
    CHECK(p.counters().used_bytes == 0);
  }
}

TEST_CASE("caching allocator private pools: counted in the usual stats, per pool, in the summary and in the snapshot") {
  SimulatedProvider p(256 * kMB);
  CachingAllocator a(p, AllocConf{});
  MemPool pool(a);
  char* ordinary = alloc(a, 2000);
  char *x = nullptr, *y = nullptr;
  {
    UseMemPool route(pool, 0);
    x = alloc(a, 1000);
    y = alloc(a, 12 * kMB);  // a 12 MiB segment
  }
  MemoryStats s = a.stats();
  CHECK(all(s.allocation) == 3);
  CHECK(all(s.allocated_bytes) == static_cast<int64_t>(2048 + 1024 + 12 * kMB));
  CHECK(s.allocated_bytes[StatType::Small].current == 2048 + 1024);
  CHECK(s.reserved_bytes[StatType::Small].current == static_cast<int64_t>(2 * kSmallBuffer));
  CHECK(s.reserved_bytes[StatType::Large].current == static_cast<int64_t>(12 * kMB));
  CHECK(all(s.segment) == 3);
  PoolStats ps = pool.stats();
  CHECK(ps.reserved_bytes == static_cast<int64_t>(kSmallBuffer + 12 * kMB));
  CHECK(ps.allocated_bytes == static_cast<int64_t>(1024 + 12 * kMB));
  CHECK(ps.allocations == 2);
  std::vector<PoolStats> pools = a.pools();
  REQUIRE(pools.size() == 1);
  CHECK(pools[0].id == pool.id());
  check_segments(a, Shadow{{ordinary, 2000}, {x, 1000}, {y, 12 * kMB}});

  const std::string summary = a.memory_summary();
  CHECK(summary.find(fmt::format("private pool {} (1 users): 14.00 MiB reserved, 12.00 MiB allocated",
                                 pool.id().value)) != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(to_json(a.memory_snapshot()));
  int in_pool = 0;
  for (const auto& seg : j["segments"]) {
    REQUIRE(seg.contains("segment_pool_id"));
    const uint64_t id = seg["segment_pool_id"][1];
    CHECK(seg["segment_pool_id"][0] == 0);
    if (id == pool.id().value) ++in_pool;
    else CHECK(id == 0);
  }
  CHECK(in_pool == 2);
  for (char* q : {ordinary, x, y}) a.raw_free(q);
  CHECK(pool.stats().allocated_bytes == 0);
  CHECK(pool.stats().reserved_bytes == static_cast<int64_t>(kSmallBuffer + 12 * kMB));
}

TEST_CASE(
    "caching allocator private pools: unknown or released ids and unbalanced routes are errors that change nothing") {
  SimulatedProvider p(256 * kMB);
  CachingAllocator a(p, AllocConf{});
  PoolId live = a.create_pool();
  a.begin_allocate_to_pool(live, [](StreamId s) { return s == 0; });
  char* x = alloc(a, 1000);
  PoolId gone = a.create_pool();
  a.release_pool(gone);
  const std::vector<PoolStats> before = a.pools();
  const MemoryStats stats_before = a.stats();
  auto unchanged = [&] {
    std::vector<PoolStats> after = a.pools();
    REQUIRE(after.size() == before.size());
    for (size_t i = 0; i < after.size(); ++i) {
      CHECK(after[i].id == before[i].id);
      CHECK(after[i].use_count == before[i].use_count);
      CHECK(after[i].routing == before[i].routing);
      CHECK(after[i].reserved_bytes == before[i].reserved_bytes);
      CHECK(after[i].allocations == before[i].allocations);
    }
    CHECK(all(a.stats().allocation) == all(stats_before.allocation));
  };
  const PoolId never{gone.value + 10};
  const std::string never_name = fmt::format("private pool {}", never.value);
  const std::string gone_name = fmt::format("private pool {}", gone.value);
  const std::string gone_route = fmt::format("routed to pool {}", gone.value);
  const std::string live_routed = fmt::format("already routed to private pool {}", live.value);
  EXPECT_ERROR(ValueError, a.release_pool(never), "release_pool", never_name.c_str(), "never created");
  EXPECT_ERROR(ValueError, a.retain_pool(PoolId{}), "retain_pool", "pool id 0");
  EXPECT_ERROR(ValueError, a.release_pool(gone), "release_pool", gone_name.c_str(), "was released");
  EXPECT_ERROR(ValueError, a.begin_allocate_to_pool(gone, current_thread()), "begin_allocate_to_pool", "was released");
  EXPECT_ERROR(ValueError, (void)a.pool_stats(never), "pool_stats", "never created");
  EXPECT_ERROR(ValueError, a.end_allocate_to_pool(gone), "end_allocate_to_pool", gone_route.c_str(),
               "begin_allocate_to_pool was not called");
  EXPECT_ERROR(ValueError, a.begin_allocate_to_pool(live, current_thread()), "begin_allocate_to_pool",
               live_routed.c_str());
  EXPECT_ERROR(ValueError, a.begin_allocate_to_pool(a.create_pool(), StreamFilter{}), "stream filter", "empty");
  a.release_pool(PoolId{gone.value + 1});  // the pool the last check created
  unchanged();
  char* y = alloc(a, 1000);
  CHECK(pool_of(a, y) == live);  // the route is still in force
  a.end_allocate_to_pool(live);
  EXPECT_ERROR(ValueError, a.end_allocate_to_pool(live), "end_allocate_to_pool", "already ended");
  a.raw_free(x);
  a.release_pool(live);
  CHECK(exists(a, live));  // y keeps it
  a.raw_free(y);
  CHECK_FALSE(exists(a, live));
}

TEST_CASE("caching allocator private pools: the OOM ladder releases the cache of dead pools, never of live ones") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  MemPool live(a);
  std::optional<MemPool> dead(std::in_place, a);
  for (MemPool* pool : {&live, &*dead}) {
    UseMemPool route(*pool, 0);
    a.raw_free(alloc(a, 3 * kMB));  // a cached 20 MiB segment in each pool
  }
  const PoolId dead_id = dead->id();
  dead.reset();  // its segment becomes ordinary cache
  CHECK_FALSE(exists(a, dead_id));
  CHECK(p.counters().used_bytes == 40 * kMB);
  // 40 + 30 > 64, and a new peak: the ordinary cache goes before the reservation (Note
  // [Releasing before a new peak]); the OOM ladder would release the same.
  char* x = alloc(a, 30 * kMB);
  MemoryStats s = a.stats();
  CHECK(s.num_alloc_retries == 0);
  CHECK(s.num_provider_frees == 1);  // the dead pool's segment only
  CHECK(live.stats().reserved_bytes == static_cast<int64_t>(20 * kMB));
  // The live pool's cache is not for ordinary requests nor given back: this one cannot be met.
  EXPECT_ERROR(OutOfMemoryError, a.raw_alloc(16 * kMB, 0), "out of memory",
               "private pools (graph pools) hold 20.00 MiB of the reserved memory");
  CHECK(live.stats().reserved_bytes == static_cast<int64_t>(20 * kMB));
  CHECK(a.stats().num_ooms == 1);
  {
    UseMemPool route(live, 0);
    char* y = alloc(a, 16 * kMB);  // the pool's own request uses its cache
    CHECK(pool_of(a, y) == live.id());
    const std::string routed = fmt::format("(routed to private pool {})", live.id().value);
    // The largest free block it could have used is the pool's 4 MiB tail after y.
    EXPECT_ERROR(OutOfMemoryError, a.raw_alloc(16 * kMB, 0), routed.c_str(), "largest free block: 4.00 MiB");
    a.raw_free(y);
  }
  a.raw_free(x);
  CHECK(live.stats().reserved_bytes == static_cast<int64_t>(20 * kMB));
  check_stats(a, p, {});
}

TEST_CASE("caching allocator private pools: threads route their own allocations to their own pools at once") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, AllocConf{});
  MemPool shared(a);  // one route at a time: threads take turns with it, under a lock of theirs
  std::mutex shared_turn;
  std::atomic<int> bad{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t) + 100);
      SimulatedProvider::set_current_stream(t % 2);
      MemPool mine(a);
      struct Held {
        anatomy::DataPtr data;
        size_t size;
        bool routed;
      };
      std::vector<Held> held;
      int64_t routed = 0;
      auto use = [&](bool route) {
        size_t n = 1 + rng() % (rng() % 4 == 0 ? 3 * kMB : 8192);
        anatomy::DataPtr d = a.allocate(n);
        std::memset(d.get(), t + 1, std::min<size_t>(n, 1024));
        held.push_back({std::move(d), n, route});
        routed += route;
      };
      for (int round = 0; round < 200; ++round) {
        {
          UseMemPool route(mine, static_cast<StreamId>(t % 2));
          for (int i = 0; i < 3; ++i) use(true);
        }
        use(false);
        // Only this thread allocates into its pool, so its count is exact despite the others.
        bad += mine.stats().allocations != routed;
        if (round % 10 == 0) {
          std::lock_guard<std::mutex> turn(shared_turn);
          UseMemPool route(shared, static_cast<StreamId>(t % 2));
          anatomy::DataPtr d = a.allocate(4096);
          bad += pool_of(a, d.get()) != shared.id();
        }
        while (held.size() > 12) {
          size_t i = rng() % held.size();
          const auto* bytes = static_cast<const unsigned char*>(held[i].data.get());
          for (size_t k = 0; k < std::min<size_t>(held[i].size, 16); ++k) bad += bytes[k] != t + 1;
          routed -= held[i].routed;
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
      held.clear();
      bad += mine.stats().allocations != 0;
    });
  }
  std::thread watcher([&] {  // reads the state while it changes: each segment still tiled
    while (!done.load()) {
      for (const SegmentInfo& seg : a.segments()) {
        size_t tiled = 0;
        for (const BlockInfo& b : seg.blocks) tiled += b.size;
        bad += tiled != seg.size;
      }
      (void)a.pools();
      (void)a.memory_summary();
    }
  });
  for (auto& th : threads) th.join();
  done = true;
  watcher.join();
  CHECK(bad.load() == 0);
  std::vector<PoolStats> pools = a.pools();
  REQUIRE(pools.size() == 1);  // the threads' pools went with their handles
  CHECK(pools[0].id == shared.id());
  a.empty_cache();
  CHECK(all(a.stats().allocation) == 0);
  CHECK(p.counters().used_bytes == static_cast<size_t>(pools[0].reserved_bytes));
}

namespace {

// A model of the pools and routes the random run made, to predict where each allocation goes.
struct PoolModel {
  int uses = 0;                   // handles (create/retain minus release)
  std::optional<StreamId> route;  // the stream its route takes, while one is in force
};

// Random steps: pools created, shared and released, routes begun and ended, mixed-size
// allocations on three streams (some used on another stream), checked against the model.
void random_pool_run(const AllocConf& conf, int steps, uint32_t seed) {
  SimulatedProvider p(2048 * kMB);
  CachingAllocator a(p, conf);
  std::mt19937 rng(seed);
  Shadow live;
  std::map<char*, PoolId> where;  // the pool each live block must be in
  std::vector<char*> order;
  std::map<PoolId, PoolModel> model;
  std::vector<PoolId> route_order;                            // routes in the order they began
  int64_t requested = 0, ooms = 0, routed = 0, orphaned = 0;  // orphaned: users gone, blocks not
  // While a route is in force the ladder cannot synchronize to free waiting blocks (Note
  // [Allocating while a graph captures]), so out-of-memory errors there are counted apart.
  int64_t ooms_routing = 0;
  auto expected_pool = [&](StreamId s) {
    for (PoolId id : route_order) {
      if (model[id].route == s) return id;
    }
    return PoolId{};
  };
  // A pool exists while it has users or a segment; every pool the model knows is checked (and
  // forgotten once it is gone), collecting failures as text as check_stats does.
  auto check_pools = [&](bool walk) {
    std::map<PoolId, int64_t> allocations;
    for (auto& [ptr, id] : where) ++allocations[id];
    std::map<PoolId, PoolStats> actual;
    for (const PoolStats& ps : a.pools()) actual[ps.id] = ps;
    std::string bad;
    for (auto it = model.begin(); it != model.end();) {
      const auto& [id, m] = *it;
      const int uses = m.uses + (m.route ? 1 : 0);
      auto found = actual.find(id);
      if (uses > 0 && (found == actual.end() || found->second.use_count != uses)) {
        bad += fmt::format("pool {}: {} users expected; ", id.value, uses);
      }
      const int64_t n = found == actual.end() ? 0 : found->second.allocations;
      if (n != allocations[id])
        bad += fmt::format("pool {}: {} allocations, {} expected; ", id.value, n, allocations[id]);
      it = found == actual.end() && uses == 0 ? model.erase(it) : std::next(it);
    }
    REQUIRE_MESSAGE(bad.empty(), bad);
    if (!walk) return;
    check_segments(a, live);
    std::map<PoolId, int64_t> segs, reserved, allocated;
    for (const SegmentInfo& seg : a.segments()) {
      ++segs[seg.pool];
      reserved[seg.pool] += static_cast<int64_t>(seg.size);
      for (const BlockInfo& b : seg.blocks) {
        if (!b.allocated) continue;
        REQUIRE(where.at(static_cast<char*>(b.ptr)) == seg.pool);
        allocated[seg.pool] += static_cast<int64_t>(b.size);
      }
    }
    for (auto& [id, ps] : actual) {
      REQUIRE(ps.segments == segs[id]);
      REQUIRE(ps.reserved_bytes == reserved[id]);
      REQUIRE(ps.allocated_bytes == allocated[id]);
      REQUIRE((ps.use_count > 0 || ps.segments > 0));  // a pool with neither is gone
    }
    for (auto& [id, n] : segs) REQUIRE((id.is_default() || actual.count(id) == 1));
  };
  for (int step = 0; step < steps; ++step) {
    const uint32_t action = rng() % 100;
    std::vector<PoolId> users, routed_to;
    size_t held = 0;  // pools with users
    for (auto& [id, m] : model) {
      if (m.uses > 0) users.push_back(id);
      if (m.route) routed_to.push_back(id);
      held += m.uses > 0 || m.route;
    }
    auto has_blocks = [&](PoolId id) {
      return std::any_of(where.begin(), where.end(), [&](const auto& w) { return w.second == id; });
    };
    if (action < 3 && held < 4) {
      model[a.create_pool()].uses = 1;
    } else if (action < 6 && !users.empty()) {  // a handle goes, or another comes
      PoolId id = users[rng() % users.size()];
      if (rng() % 5 < 2) {
        a.retain_pool(id);
        ++model[id].uses;
      } else {
        a.release_pool(id);
        --model[id].uses;
        orphaned += model[id].uses == 0 && !model[id].route && has_blocks(id);
      }
    } else if (action < 9 && !routed_to.empty() && rng() % 2) {  // a route ends
      PoolId id = routed_to[rng() % routed_to.size()];
      a.end_allocate_to_pool(id);
      model[id].route.reset();
      route_order.erase(std::find(route_order.begin(), route_order.end(), id));
      orphaned += model[id].uses == 0 && has_blocks(id);
    } else if (action < 9 && !users.empty()) {  // a route begins
      PoolId id = users[rng() % users.size()];
      if (!model[id].route) {
        StreamId s = static_cast<StreamId>(rng() % 3);
        a.begin_allocate_to_pool(id, [s](StreamId x) { return x == s; });
        model[id].route = s;
        route_order.push_back(id);
      }
    } else if (action < 55 && live.size() < 200) {
      size_t n = rng() % 4 == 0 ? kSmallSize + 1 + rng() % (12 * kMB) : 1 + rng() % (64 * 1024);
      StreamId s = static_cast<StreamId>(rng() % 3);
      char* ptr = nullptr;
      try {
        ptr = alloc(a, n, s);
      } catch (const anatomy::OutOfMemoryError&) {  // pools hold cache of their own: it may run out
        ++(route_order.empty() ? ooms : ooms_routing);
        check_stats(a, p, live, requested);
        continue;
      }
      live[ptr] = n;
      where[ptr] = expected_pool(s);
      routed += !where[ptr].is_default();
      requested += static_cast<int64_t>(n);
      order.push_back(ptr);
      if (rng() % 8 == 0) a.record_stream(ptr, static_cast<StreamId>(rng() % 3));
    } else if (!order.empty()) {
      where.erase(free_random_block(a, order, live, requested, rng));
    }
    if (rng() % 16 == 0) p.complete_all(static_cast<StreamId>(rng() % 3));
    if (step % 10000 == 9999) a.empty_cache();
    check_stats(a, p, live, requested);
    check_pools(step % 500 == 0);
  }
  check_pools(true);
  INFO("routed allocations: ", routed, ", pools orphaned with blocks: ", orphaned, ", OOMs: ", ooms,
       ", OOMs while routing: ", ooms_routing);
  CHECK(routed > steps / 20);  // the run did exercise the pools
  CHECK(orphaned > steps / 5000);
  CHECK(ooms < 100);
  // Everything goes: routes end, handles are released, blocks freed, events complete.
  for (PoolId id : route_order) a.end_allocate_to_pool(id);
  for (auto& [id, m] : model) {
    for (; m.uses > 0; --m.uses) a.release_pool(id);
  }
  for (char* ptr : order) a.raw_free(ptr);
  for (StreamId s = 0; s < 3; ++s) p.complete_all(s);
  a.raw_free(a.raw_alloc(1, 0));  // processes the completed events
  CHECK(a.pools().empty());
  MemoryStats s = a.stats();
  CHECK(all(s.allocation) == 0);
  CHECK(all(s.active) == 0);
  a.empty_cache();
  CHECK(p.counters().used_bytes == 0);
  CHECK(a.segments().empty());
}

}  // namespace

TEST_CASE("caching allocator private pools: random pools, routes, allocations and frees keep every invariant") {
  random_pool_run(AllocConf{}, 30000, 2024);
}

TEST_CASE("caching allocator private pools: random run with max_split_size and power-of-two rounding") {
  random_pool_run(parse_alloc_conf("max_split_size_mb:24,roundup_power2_divisions:4"), 10000, 5);
}

TEST_CASE("caching allocator private pools: random run with caching off") {
  AllocConf conf;
  conf.caching = false;
  random_pool_run(conf, 8000, 11);
}
