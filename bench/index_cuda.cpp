// CUDA scatters of 16M fp32 values: index_add_, scatter_reduce_ "sum" and scatter_add_ along a
// 1-D self of 1024 elements (long runs of repeated indices) and of 16M (about one value each),
// device time per call between two events (manual time). These 1-D walks take the sorted path
// (Note [Sorted scatter on CUDA]); bench/peer/index.cpp has the same rows next to libtorch.
//   build/bench/anatomy_bench_index_cuda --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <functional>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

namespace {

constexpr int64_t kValues = int64_t{1} << 24;

using Scatter =
    std::function<void(const anatomy::Tensor& self, const anatomy::Tensor& index, const anatomy::Tensor& src)>;

// One row: self of state.range(0) elements, 16M random indices into it and 16M values, made on
// the CPU and copied over once. Each call accumulates into the same self (its values only grow
// in magnitude: never all zeros).
void scatter_row(benchmark::State& state, const Scatter& scatter) {
  if (anatomy::cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const anatomy::Device cuda(anatomy::DeviceType::CUDA);
  const int64_t targets = state.range(0);
  const anatomy::Tensor self = anatomy::randn({targets}).to(cuda);
  const anatomy::Tensor index = anatomy::randint(0, targets, {kValues}, anatomy::DType::Int64).to(cuda);
  const anatomy::Tensor src = anatomy::randn({kValues}).to(cuda);
  scatter(self, index, src);  // warm-up: the caching allocator's blocks, CUB's first call
  anatomy::cuda::Event start(/*enable_timing=*/true), stop(/*enable_timing=*/true);
  for (auto _ : state) {
    start.record();
    scatter(self, index, src);
    stop.record();
    stop.synchronize();
    state.SetIterationTime(start.elapsed_time(stop) / 1e3);
  }
  // Bytes: the indices and values read once, the targets read and written once.
  state.SetBytesProcessed(state.iterations() * (kValues * (8 + 4) + targets * 4 * 2));
  state.SetItemsProcessed(state.iterations() * kValues);
}

void BM_IndexAdd(benchmark::State& state) {
  scatter_row(state, [](const anatomy::Tensor& s, const anatomy::Tensor& i, const anatomy::Tensor& v) {
    s.index_add_(0, i, v);
  });
}

void BM_ScatterReduceSum(benchmark::State& state) {
  scatter_row(state, [](const anatomy::Tensor& s, const anatomy::Tensor& i, const anatomy::Tensor& v) {
    s.scatter_reduce_(0, i, v, "sum");
  });
}

void BM_ScatterAdd(benchmark::State& state) {
  scatter_row(state, [](const anatomy::Tensor& s, const anatomy::Tensor& i, const anatomy::Tensor& v) {
    s.scatter_add_(0, i, v);
  });
}

}  // namespace

BENCHMARK(BM_IndexAdd)->Arg(1024)->Arg(kValues)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScatterReduceSum)->Arg(1024)->Arg(kValues)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScatterAdd)->Arg(1024)->Arg(kValues)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
