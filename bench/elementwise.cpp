// Element-wise CPU operators: host overhead on tiny tensors, and bandwidth on large ones next to
// memcpy measured in the same run.
//
//   build/bench/anatomy_bench_elementwise --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstring>
#include <limits>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/backends/cpu/streaming_store.h"

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

// Bytes read plus written per second, counted as memcpy's are. The argument: 1 writes the output
// with streaming stores (the default for outputs of 16 MiB and more), 0 with stores in place
// (Note [Streaming stores for large outputs]).
class StreamingStores {
 public:
  explicit StreamingStores(bool on) : saved_(anatomy::cpu::streaming_store_threshold()) {
    anatomy::cpu::set_streaming_store_threshold(on ? 0 : std::numeric_limits<size_t>::max());
  }
  ~StreamingStores() { anatomy::cpu::set_streaming_store_threshold(saved_); }
  StreamingStores(const StreamingStores&) = delete;
  StreamingStores& operator=(const StreamingStores&) = delete;

 private:
  size_t saved_;
};

void BM_AddLarge(benchmark::State& state) {
  const StreamingStores mode(state.range(0) != 0);
  Tensor a = anatomy::randn({k64MiBFloats}), b = anatomy::randn({k64MiBFloats});
  Tensor c = anatomy::empty({k64MiBFloats});
  for (auto _ : state) anatomy::add_out(c, a, b);
  state.SetBytesProcessed(state.iterations() * 3 * k64MiBFloats * 4);
}
BENCHMARK(BM_AddLarge)->ArgName("streaming")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_MulLarge(benchmark::State& state) {
  const StreamingStores mode(state.range(0) != 0);
  Tensor a = anatomy::randn({k64MiBFloats}), b = anatomy::randn({k64MiBFloats});
  Tensor c = anatomy::empty({k64MiBFloats});
  for (auto _ : state) anatomy::mul_out(c, a, b);
  state.SetBytesProcessed(state.iterations() * 3 * k64MiBFloats * 4);
}
BENCHMARK(BM_MulLarge)->ArgName("streaming")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_MemcpyLarge(benchmark::State& state) {
  std::vector<float> src(k64MiBFloats, 1.0f), dst(k64MiBFloats);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size() * sizeof(float));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * k64MiBFloats * 4);
}
BENCHMARK(BM_MemcpyLarge)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
