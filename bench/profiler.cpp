// What the profiler costs per operator (docs/profiler.md, "Overhead"): the tiny CPU add with no
// profile (the Profiler key is in no call's key set: this row must not move against the build
// before the profiler), inside an active profile, and inside one that records no shapes; and a
// tiny factory (empty, whose device is an argument) without a profile and inside one with
// profile_memory.
// PyTorch's profiler beside it: bench/python/overhead.py's profiled rows.
//
//   build/bench/anatomy_bench_profiler --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <memory>

#include "anatomy/anatomy.h"
#include "anatomy/profiler/profiler.h"

namespace {

using anatomy::Tensor;

void BM_AddTiny(benchmark::State& state) {
  const Tensor a = anatomy::ones({1}), b = anatomy::ones({1});
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
  }
}
BENCHMARK(BM_AddTiny);

// The events accumulate: a fresh profile every 65536 calls keeps the log's memory bounded (the
// restart is not timed).
template <typename F>
void profiled(benchmark::State& state, anatomy::profiler::ProfileOptions options, F&& call) {
  auto profile = std::make_unique<anatomy::profiler::Profile>(options);
  int64_t n = 0;
  for (auto _ : state) {
    Tensor c = call();
    benchmark::DoNotOptimize(c.impl());
    if (++n % 65536 == 0) {
      state.PauseTiming();
      profile->stop();
      profile->start();
      state.ResumeTiming();
    }
  }
  profile->stop();
}

void profiled_add(benchmark::State& state, bool record_shapes) {
  const Tensor a = anatomy::ones({1}), b = anatomy::ones({1});
  profiled(state, {.record_shapes = record_shapes}, [&] { return a + b; });
}

void BM_AddTinyProfiled(benchmark::State& state) { profiled_add(state, true); }
BENCHMARK(BM_AddTinyProfiled);

void BM_AddTinyProfiledNoShapes(benchmark::State& state) { profiled_add(state, false); }
BENCHMARK(BM_AddTinyProfiledNoShapes);

void BM_EmptyTiny(benchmark::State& state) {
  for (auto _ : state) {
    Tensor c = anatomy::empty({1});
    benchmark::DoNotOptimize(c.impl());
  }
}
BENCHMARK(BM_EmptyTiny);

void BM_EmptyTinyProfiledMemory(benchmark::State& state) {
  profiled(state, {.profile_memory = true}, [] { return anatomy::empty({1}); });
}
BENCHMARK(BM_EmptyTinyProfiledMemory);

}  // namespace

BENCHMARK_MAIN();
