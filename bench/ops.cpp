// Operator benchmarks from the op table: every entry with a bench_input is timed on fp32
// inputs of 1 element (host overhead), 64K and 16M elements (bandwidth). Bytes per second count
// every input and output byte once.
//   build/bench/anatomy_bench_ops --benchmark_filter=add
#include <benchmark/benchmark.h>

#include "anatomy/testing/op_table.h"

using namespace anatomy;
using namespace anatomy::testing;

namespace {

void run(benchmark::State& state, const OpInfo* info) {
  const SampleInput sample = info->bench_input(state.range(0));
  std::vector<Tensor> out;
  for (auto _ : state) {
    out = info->op(sample);
    benchmark::DoNotOptimize(out.data());
  }
  int64_t bytes = 0;
  for (const Tensor& t : sample.tensors) bytes += t.defined() ? static_cast<int64_t>(t.nbytes()) : 0;
  for (const Tensor& t : out) bytes += static_cast<int64_t>(t.nbytes());
  state.SetBytesProcessed(state.iterations() * bytes);
}

}  // namespace

// The table fills during static initialization, so benchmarks are registered from main.
int main(int argc, char** argv) {
  for (const OpInfo& info : op_table()) {
    if (!info.bench_input) continue;
    benchmark::RegisterBenchmark(("op/" + info.name).c_str(), run, &info)
        ->Arg(1)
        ->Arg(1 << 16)
        ->Arg(1 << 24)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
