// What the profiler costs per operator (docs/profiler.md, "Overhead"): the tiny CPU add with no
// profile (the Profiler key is in no call's key set: this row must not move against the build
// before the profiler), inside an active profile, and inside one that records no shapes.
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
void profiled_add(benchmark::State& state, bool record_shapes) {
  const Tensor a = anatomy::ones({1}), b = anatomy::ones({1});
  auto profile =
      std::make_unique<anatomy::profiler::Profile>(anatomy::profiler::ProfileOptions{.record_shapes = record_shapes});
  int64_t n = 0;
  for (auto _ : state) {
    Tensor c = a + b;
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

void BM_AddTinyProfiled(benchmark::State& state) { profiled_add(state, true); }
BENCHMARK(BM_AddTinyProfiled);

void BM_AddTinyProfiledNoShapes(benchmark::State& state) { profiled_add(state, false); }
BENCHMARK(BM_AddTinyProfiledNoShapes);

}  // namespace

BENCHMARK_MAIN();
