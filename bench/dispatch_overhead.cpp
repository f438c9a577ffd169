// What the dispatcher costs: a no-op operator called through it against the same kernel called
// directly through a function pointer (so neither side is inlined away).
//
//   build/bench/anatomy_bench_dispatch --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "anatomy/anatomy.h"

namespace {

using anatomy::Tensor;

Tensor noop_kernel(const Tensor& self) { return self; }

// noop is declared not differentiable (a fallthrough at its Autograd key), so a call skips the
// autograd keys as a built-in without a derivative does; noop_no_autograd has only its CPU
// kernel, so its calls pass the autograd fallback (Note [Autograd fallback]).
ANATOMY_LIBRARY(bench, m) {
  m.def("noop(Tensor self) -> Tensor");
  m.def("noop_no_autograd(Tensor self) -> Tensor");
}
ANATOMY_LIBRARY_IMPL(bench, CPU, m) {
  m.impl("noop", ANATOMY_KERNEL(noop_kernel));
  m.impl("noop_no_autograd", ANATOMY_KERNEL(noop_kernel));
}
ANATOMY_LIBRARY_IMPL(bench, Autograd, m) { m.impl_fallthrough("noop"); }

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

// An operator without an autograd kernel, on a tensor that needs no gradient: the autograd
// fallback boxes the call and redispatches it to the CPU kernel.
void BM_AutogradFallbackCall(benchmark::State& state) {
  Tensor t = anatomy::zeros({1});
  static const auto op = anatomy::dispatch::Dispatcher::singleton()
                             .find_or_throw("bench::noop_no_autograd")
                             .typed<Tensor(const Tensor&)>();
  for (auto _ : state) {
    Tensor r = op.call(t);
    benchmark::DoNotOptimize(r.impl());
  }
}
BENCHMARK(BM_AutogradFallbackCall);

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
