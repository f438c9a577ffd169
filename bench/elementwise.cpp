// Element-wise CPU operators: host overhead on tiny tensors, and bandwidth on large ones next to
// memcpy measured in the same run (the large adds and multiplies, each with and without streaming
// stores, are elementwise_streaming.cpp, in the same executable), and the transcendental
// functions' throughput.
//
//   build/bench/anatomy_bench_elementwise --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "anatomy/anatomy.h"

namespace {

using anatomy::Tensor;

// End to end: dispatch, plan, output allocation, one element of work.
void BM_AddTiny(benchmark::State& state) {
  Tensor a = anatomy::ones({1}), b = anatomy::ones({1});
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}
BENCHMARK(BM_AddTiny);

// A tensor and a C++ number (`a * 2`): the number becomes a 0-dim tensor (a wrapped number),
// cast to the tensor's dtype, and joins the loop at stride 0.
void BM_MulScalarTiny(benchmark::State& state) {
  Tensor a = anatomy::ones({1});
  for (auto _ : state) {
    Tensor c = a * 2;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}
BENCHMARK(BM_MulScalarTiny);

// The same into an existing output (add.out): no allocation; the out= form's check at the
// Autograd key (autograd/out_forms.cpp) is on this path.
void BM_AddOutTiny(benchmark::State& state) {
  Tensor a = anatomy::ones({1}), b = anatomy::ones({1}), c = anatomy::empty({1});
  for (auto _ : state) {
    anatomy::add_out(c, a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
}
BENCHMARK(BM_AddOutTiny);

constexpr int64_t k64MiBFloats = int64_t{64} << 18;  // 64 MiB of fp32

void BM_MemcpyLarge(benchmark::State& state) {
  std::vector<float> src(k64MiBFloats, 1.0f), dst(k64MiBFloats);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size() * sizeof(float));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * k64MiBFloats * 4);
}
BENCHMARK(BM_MemcpyLarge)->Unit(benchmark::kMillisecond);

// Transcendental unary operators on fp32 into a reused output, so the figure is the kernel's
// arithmetic and not the first touch of a fresh output's pages: 16M elements for throughput,
// 64K (in cache) for instruction counts under callgrind. Inputs are uniform in [-8, 8] (log and
// log1p: [0.01, 8]), where every function is in its general case.
template <typename Op>
void unary_fp32(benchmark::State& state, Op op, bool positive) {
  const int64_t n = state.range(0);
  Tensor x = anatomy::rand({n});
  x = positive ? x * 7.99 + 0.01 : x * 16 - 8;
  Tensor out = anatomy::empty({n});
  for (auto _ : state) op(out, x);
  state.SetBytesProcessed(state.iterations() * 2 * n * 4);
}
#define ANATOMY_UNARY_FP32(name, positive, ...)                                          \
  BENCHMARK_CAPTURE(                                                                     \
      unary_fp32, name, [](const Tensor& o, const Tensor& x) { __VA_ARGS__; }, positive) \
      ->Arg(1 << 16)                                                                     \
      ->Arg(1 << 24)                                                                     \
      ->Unit(benchmark::kMillisecond)                                                    \
      ->UseRealTime()
ANATOMY_UNARY_FP32(exp, false, anatomy::exp_out(o, x));
ANATOMY_UNARY_FP32(log, true, anatomy::log_out(o, x));
ANATOMY_UNARY_FP32(sigmoid, false, anatomy::sigmoid_out(o, x));
ANATOMY_UNARY_FP32(silu, false, anatomy::silu_out(o, x));
ANATOMY_UNARY_FP32(tanh, false, anatomy::tanh_out(o, x));
ANATOMY_UNARY_FP32(gelu, false, anatomy::gelu_out(o, x));
ANATOMY_UNARY_FP32(gelu_tanh, false, anatomy::gelu_out(o, x, "tanh"));
ANATOMY_UNARY_FP32(softplus, false, anatomy::softplus_out(o, x));
ANATOMY_UNARY_FP32(erf, false, anatomy::erf_out(o, x));
ANATOMY_UNARY_FP32(expm1, false, anatomy::expm1_out(o, x));
ANATOMY_UNARY_FP32(log1p, true, anatomy::log1p_out(o, x));
ANATOMY_UNARY_FP32(sin, false, anatomy::sin_out(o, x));
ANATOMY_UNARY_FP32(cos, false, anatomy::cos_out(o, x));
#undef ANATOMY_UNARY_FP32

// gelu over N(0, 1) arguments, as activations mostly are: the AVX-512 loop's polynomial pieces
// alone (Note [gelu by polynomial pieces]); the uniform row above spends most vectors in its tail.
void unary_fp32_normal_gelu(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor x = anatomy::randn({n});
  Tensor out = anatomy::empty({n});
  for (auto _ : state) anatomy::gelu_out(out, x);
  state.SetBytesProcessed(state.iterations() * 2 * n * 4);
}
BENCHMARK(unary_fp32_normal_gelu)->Arg(1 << 16)->Arg(1 << 24)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
