// Reductions on the CPU: sum over 64 MiB of fp32 (all dims, the inner dim of rows, the outer dim
// of columns) next to a memcpy of the same size measured in the same run. A sum reads each byte
// once; memcpy reads and writes each, so both report bytes read (plus written for memcpy).
//
//   build/bench/anatomy_bench_reduce --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "anatomy/anatomy.h"

namespace {

using anatomy::Tensor;

constexpr int64_t k64MiBFloats = int64_t{64} << 18;  // 64 MiB of fp32

void BM_SumAll(benchmark::State& state) {
  Tensor a = anatomy::randn({k64MiBFloats});
  for (auto _ : state) {
    Tensor s = anatomy::sum(a);
    benchmark::DoNotOptimize(s.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k64MiBFloats * 4);
}
BENCHMARK(BM_SumAll)->Unit(benchmark::kMillisecond)->UseRealTime();

// [4096, 4096]: rows of 16 KiB each reduced to one value.
void BM_SumInnerDim(benchmark::State& state) {
  Tensor a = anatomy::randn({4096, k64MiBFloats / 4096});
  for (auto _ : state) {
    Tensor s = anatomy::sum(a, {1});
    benchmark::DoNotOptimize(s.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k64MiBFloats * 4);
}
BENCHMARK(BM_SumInnerDim)->Unit(benchmark::kMillisecond)->UseRealTime();

// [4096, 4096] reduced over dim 0: rows accumulated element-wise.
void BM_SumOuterDim(benchmark::State& state) {
  Tensor a = anatomy::randn({4096, k64MiBFloats / 4096});
  for (auto _ : state) {
    Tensor s = anatomy::sum(a, {0});
    benchmark::DoNotOptimize(s.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k64MiBFloats * 4);
}
BENCHMARK(BM_SumOuterDim)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_AmaxAll(benchmark::State& state) {
  Tensor a = anatomy::randn({k64MiBFloats});
  for (auto _ : state) {
    Tensor s = anatomy::amax(a);
    benchmark::DoNotOptimize(s.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * k64MiBFloats * 4);
}
BENCHMARK(BM_AmaxAll)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MemcpyLarge(benchmark::State& state) {
  std::vector<float> src(k64MiBFloats, 1.0f), dst(k64MiBFloats);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size() * sizeof(float));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * k64MiBFloats * 4);
}
BENCHMARK(BM_MemcpyLarge)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
