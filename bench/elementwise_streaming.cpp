// The large element-wise outputs of anatomy_bench_elementwise (elementwise.cpp, whose
// BM_MemcpyLarge they are set beside), written both ways: the CPU kernels' streaming-store
// threshold (backends/cpu/streaming_store.h, an internal switch) is set per run to measure
// streaming stores against stores in place on the same operator.
#include <benchmark/benchmark.h>

#include <limits>

#include "anatomy/anatomy.h"
#include "anatomy/backends/cpu/streaming_store.h"

namespace {

using anatomy::Tensor;

constexpr int64_t k64MiBFloats = int64_t{64} << 18;  // 64 MiB of fp32

// out = op(a, b) over 64 MiB of fp32 into a reused output. Bytes read plus written per second,
// counted as memcpy's are. The argument: 1 writes the output with streaming stores (the default
// for outputs of 16 MiB and more), 0 with stores in place (Note [Streaming stores for large
// outputs]).
template <typename Op>
void large_binary_out(benchmark::State& state, Op op) {
  const anatomy::cpu::StreamingStoreThreshold mode(state.range(0) != 0 ? 0 : std::numeric_limits<size_t>::max());
  Tensor a = anatomy::randn({k64MiBFloats}), b = anatomy::randn({k64MiBFloats});
  Tensor c = anatomy::empty({k64MiBFloats});
  for (auto _ : state) op(c, a, b);
  state.SetBytesProcessed(state.iterations() * 3 * k64MiBFloats * 4);
}

void BM_AddLarge(benchmark::State& state) {
  large_binary_out(state, [](const Tensor& c, const Tensor& a, const Tensor& b) { anatomy::add_out(c, a, b); });
}
BENCHMARK(BM_AddLarge)->ArgName("streaming")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_MulLarge(benchmark::State& state) {
  large_binary_out(state, [](const Tensor& c, const Tensor& a, const Tensor& b) { anatomy::mul_out(c, a, b); });
}
BENCHMARK(BM_MulLarge)->ArgName("streaming")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
