// The caching allocator's hot path on the simulated device: a cached allocate + free pair (the
// target: at most 100 ns for 1 MiB), host time only. The cache is warm before timing starts,
// so no pair reaches the provider; what is measured is the policy's own work (lock, rounding,
// best-fit lookup, split and merge, the maps of allocated blocks, the stats).
//
//   build/bench/anatomy_bench_alloc --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
//
// bench/peer/alloc.cpp measures the same pair over CUDA next to torch's.
#include <benchmark/benchmark.h>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/simulated_provider.h"

namespace {

using namespace anatomy::alloc;

constexpr size_t kCapacity = 1024 * kMB;

// allocate() -> DataPtr -> its free, as a tensor's storage does: the free path goes through the
// DataPtr's deleter. A 1 MiB block splits a cached 2 MiB small-pool segment and merges back; a
// 512 B one does the same with a 2 MiB remainder.
void BM_CachedAllocFreePair(benchmark::State& state, size_t bytes) {
  SimulatedProvider device(kCapacity);
  CachingAllocator cache(device, AllocConf{});
  { anatomy::DataPtr warm = cache.allocate(bytes); }
  for (auto _ : state) {
    anatomy::DataPtr p = cache.allocate(bytes);
    benchmark::DoNotOptimize(p.get());
  }
  state.counters["provider_allocs"] = static_cast<double>(cache.stats().num_provider_allocs);
}
BENCHMARK_CAPTURE(BM_CachedAllocFreePair, 1MiB, size_t{1} << 20);
BENCHMARK_CAPTURE(BM_CachedAllocFreePair, 512B, size_t{512});

// The same pair while another block of the segment is in use, so neither split nor merge runs
// into a whole segment: what the pair costs in a busy cache.
void BM_CachedAllocFreePairBusySegment(benchmark::State& state, size_t bytes) {
  SimulatedProvider device(kCapacity);
  CachingAllocator cache(device, AllocConf{});
  anatomy::DataPtr neighbour = cache.allocate(512);
  { anatomy::DataPtr warm = cache.allocate(bytes); }
  for (auto _ : state) {
    anatomy::DataPtr p = cache.allocate(bytes);
    benchmark::DoNotOptimize(p.get());
  }
}
BENCHMARK_CAPTURE(BM_CachedAllocFreePairBusySegment, 512B, size_t{512});

// The same pair in an expandable segment (expandable_segments:True): the hot path must not pay
// for the bookkeeping of unmapped pages, which only empty_cache and the growth path touch.
void BM_CachedAllocFreePairExpandable(benchmark::State& state, size_t bytes) {
  SimulatedProvider device(kCapacity);
  AllocConf conf;
  conf.expandable_segments = true;
  CachingAllocator cache(device, conf);
  anatomy::DataPtr neighbour = cache.allocate(512);
  { anatomy::DataPtr warm = cache.allocate(bytes); }
  for (auto _ : state) {
    anatomy::DataPtr p = cache.allocate(bytes);
    benchmark::DoNotOptimize(p.get());
  }
  state.counters["provider_maps"] = static_cast<double>(cache.stats().num_provider_maps);
}
BENCHMARK_CAPTURE(BM_CachedAllocFreePairExpandable, 1MiB, size_t{1} << 20);

// raw_alloc / raw_free, PyTorch's raw_alloc / raw_delete: the free looks the block up by pointer.
void BM_RawAllocFreePair(benchmark::State& state, size_t bytes) {
  SimulatedProvider device(kCapacity);
  CachingAllocator cache(device, AllocConf{});
  cache.raw_free(cache.raw_alloc(bytes, 0));
  for (auto _ : state) {
    void* p = cache.raw_alloc(bytes, 0);
    benchmark::DoNotOptimize(p);
    cache.raw_free(p);
  }
}
BENCHMARK_CAPTURE(BM_RawAllocFreePair, 1MiB, size_t{1} << 20);
BENCHMARK_CAPTURE(BM_RawAllocFreePair, 512B, size_t{512});

}  // namespace

BENCHMARK_MAIN();
