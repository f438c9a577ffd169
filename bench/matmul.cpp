// fp32 matrix products on the CPU: anatomy::mm next to cblas_sgemm called directly on the same
// buffers in the same run (the target: mm within 10% of BLAS), and transposed operands, which
// reach BLAS as Trans flags (no copy: the same time as the contiguous case), next to a strided
// operand that does need a copy. anatomy runs OpenBLAS on one thread and splits products over
// its own pool (Note [One thread pool for products], backends/cpu/blas_cpu.cpp); the direct
// cblas_sgemm gets OpenBLAS's own threads, as many as anatomy's pool has, for its run.
//
//   build/bench/anatomy_bench_matmul --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <cblas.h>

#include "anatomy/anatomy.h"

namespace {

using anatomy::Tensor;

constexpr int64_t kN = 1024;

// 2 n^3 floating-point operations per product.
void set_flops(benchmark::State& state, int64_t n) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(static_cast<double>(2 * n * n * n) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void BM_CblasSgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = anatomy::randn({n, n}), b = anatomy::randn({n, n}), c = anatomy::empty({n, n});
  const int ni = static_cast<int>(n);
  openblas_set_num_threads(anatomy::get_num_threads());
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data_ptr<float>(), ni,
                b.data_ptr<float>(), ni, 0.0f, c.data_ptr<float>(), ni);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  openblas_set_num_threads(1);  // back to what anatomy set
  set_flops(state, n);
}
BENCHMARK(BM_CblasSgemm)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();

// End to end: dispatch, checks, allocation of the result, sgemm.
void BM_Mm(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = anatomy::randn({n, n}), b = anatomy::randn({n, n});
  for (auto _ : state) {
    Tensor c = anatomy::mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_flops(state, n);
}
BENCHMARK(BM_Mm)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();

// mm.out into a preallocated result: the path closest to the bare cblas call.
void BM_MmOut(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = anatomy::randn({n, n}), b = anatomy::randn({n, n}), c = anatomy::empty({n, n});
  for (auto _ : state) anatomy::mm_out(c, a, b);
  set_flops(state, n);
}
BENCHMARK(BM_MmOut)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();

// a.t() and b.t() are views with strides [1, n]: BLAS gets Trans flags, nothing is copied.
void BM_MmTransposedA(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = anatomy::randn({n, n}).t(), b = anatomy::randn({n, n});
  for (auto _ : state) {
    Tensor c = anatomy::mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_flops(state, n);
}
BENCHMARK(BM_MmTransposedA)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MmTransposedBoth(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = anatomy::randn({n, n}).t(), b = anatomy::randn({n, n}).t();
  for (auto _ : state) {
    Tensor c = anatomy::mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_flops(state, n);
}
BENCHMARK(BM_MmTransposedBoth)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();

// Every other column of a [n, 2n] matrix: strides [2n, 2], no BLAS layout, one copy per call.
void BM_MmStridedCopy(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = anatomy::randn({n, 2 * n}).slice(1, 0, 2 * n, 2), b = anatomy::randn({n, n});
  for (auto _ : state) {
    Tensor c = anatomy::mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_flops(state, n);
}
BENCHMARK(BM_MmStridedCopy)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();

// fp16: converts to fp32, sgemm, rounds once.
void BM_MmHalf(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = anatomy::randn({n, n}).to(anatomy::DType::Float16), b = anatomy::randn({n, n}).to(anatomy::DType::Float16);
  for (auto _ : state) {
    Tensor c = anatomy::mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_flops(state, n);
}
BENCHMARK(BM_MmHalf)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();

// int8 x int8 -> int32 through the blocked C++ loop.
void BM_MmInt8(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = anatomy::randint(-8, 8, {n, n}, anatomy::TensorOptions().dtype(anatomy::DType::Int8));
  Tensor b = anatomy::randint(-8, 8, {n, n}, anatomy::TensorOptions().dtype(anatomy::DType::Int8));
  for (auto _ : state) {
    Tensor c = anatomy::mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_flops(state, n);
}
BENCHMARK(BM_MmInt8)->Arg(256)->Arg(kN)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
