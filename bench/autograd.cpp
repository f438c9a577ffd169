// Autograd's host cost: a training step of a 10-layer, 16-wide MLP (batch 8, loss = sum of
// squares) forward and backward, the same step as bench/peer's mlp10x16_fwd_bwd_cpu without
// libtorch beside it; and the graph alone: one add recorded and backpropagated.
#include <benchmark/benchmark.h>

#include <vector>

#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

void BM_MlpFwdBwd(benchmark::State& state) {
  constexpr int kLayers = 10, kWidth = 16, kBatch = 8;
  manual_seed(0);
  std::vector<Tensor> w, b;
  for (int i = 0; i < kLayers; ++i) {
    w.push_back((randn({kWidth, kWidth}) * 0.25).requires_grad_());
    b.push_back((randn({kWidth}) * 0.25).requires_grad_());
  }
  const Tensor x = randn({kBatch, kWidth});
  for (auto _ : state) {
    for (int i = 0; i < kLayers; ++i) w[i].set_grad({}), b[i].set_grad({});
    Tensor h = x;
    for (int i = 0; i < kLayers; ++i) {
      h = linear(h, w[i], b[i]);
      if (i + 1 < kLayers) h = relu(h);
    }
    (h * h).sum().backward();
    benchmark::DoNotOptimize(w[0].grad().data_ptr());
  }
}
BENCHMARK(BM_MlpFwdBwd)->Unit(benchmark::kMicrosecond);

// One recorded add and its backward into two leaves: the fixed cost of a node.
void BM_AddBackwardTiny(benchmark::State& state) {
  Tensor a = randn({1}).requires_grad_(), c = randn({1}).requires_grad_();
  for (auto _ : state) {
    a.set_grad({}), c.set_grad({});
    (a + c).backward(ones({1}));
    benchmark::DoNotOptimize(a.grad().data_ptr());
  }
}
BENCHMARK(BM_AddBackwardTiny);

}  // namespace

BENCHMARK_MAIN();
