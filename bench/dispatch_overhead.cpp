// What the dispatcher costs: a no-op operator called through it against the same kernel called
// directly through a function pointer (so neither side is inlined away).
//
//   build/bench/anatomy_bench_dispatch --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "anatomy/anatomy.h"

namespace {

using anatomy::Tensor;

Tensor noop_kernel(const Tensor& self) { return self; }

ANATOMY_LIBRARY(bench, m) { m.def("noop(Tensor self) -> Tensor"); }
ANATOMY_LIBRARY_IMPL(bench, CPU, m) { m.impl("noop", ANATOMY_KERNEL(noop_kernel)); }

const auto& noop_op() {
  static const auto op =
      anatomy::dispatch::Dispatcher::singleton().find_or_throw("bench::noop").typed<Tensor(const Tensor&)>();
  return op;
}

void BM_DirectCall(benchmark::State& state) {
  Tensor t = anatomy::zeros({1});
  Tensor (*volatile fn)(const Tensor&) = &noop_kernel;
  for (auto _ : state) {
    Tensor r = fn(t);
    benchmark::DoNotOptimize(r.impl());
  }
}
BENCHMARK(BM_DirectCall);

void BM_DispatcherCall(benchmark::State& state) {
  Tensor t = anatomy::zeros({1});
  const auto& op = noop_op();
  for (auto _ : state) {
    Tensor r = op.call(t);
    benchmark::DoNotOptimize(r.impl());
  }
}
BENCHMARK(BM_DispatcherCall);

// Through the boxed convention (what a fallback such as the Tracer pays per call).
void BM_BoxedCall(benchmark::State& state) {
  Tensor t = anatomy::zeros({1});
  const auto& op = noop_op();
  anatomy::dispatch::Stack stack;
  for (auto _ : state) {
    stack.clear();
    stack.emplace_back(t);
    op.call_boxed(stack);
    benchmark::DoNotOptimize(stack.data());
  }
}
BENCHMARK(BM_BoxedCall);

// A view op end to end: dispatch plus a new TensorImpl.
void BM_TransposeView(benchmark::State& state) {
  Tensor t = anatomy::zeros({4, 4});
  for (auto _ : state) {
    Tensor r = t.transpose(0, 1);
    benchmark::DoNotOptimize(r.impl());
  }
}
BENCHMARK(BM_TransposeView);

}  // namespace

BENCHMARK_MAIN();
