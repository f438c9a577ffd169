// Autograd's host cost: a training step of a 10-layer, 16-wide MLP (batch 8, loss = sum of
// squares) forward and backward, the same step as bench/peer's mlp10x16_fwd_bwd_cpu without
// libtorch beside it; the graph alone: one add recorded and backpropagated; and 1,000 SGD steps
// of a small MLP, 21 times, whose slowest run against the median shows whether the engine's
// threads and a BLAS's fight on a busy machine (docs/perf.md, "Threads that don't fight").
#include <benchmark/benchmark.h>

#include <algorithm>
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

// One repetition is 1,000 steps (64 -> 128 -> 128 -> 10, batch 32, cross_entropy, SGD with
// momentum); `max/median` over the 21 repetitions is the figure: a thread pool that spins against
// another one's threads stalls some runs several times over.
void BM_SmallMlpThousandSteps(benchmark::State& state) {
  manual_seed(0);
  std::vector<Tensor> params;
  auto param = [&](IntArrayRef sizes) {
    params.push_back((randn(sizes) * 0.1).requires_grad_());
    return params.back();
  };
  const Tensor w1 = param({128, 64}), b1 = param({128}), w2 = param({128, 128}), b2 = param({128});
  const Tensor w3 = param({10, 128}), b3 = param({10});
  optim::SGD opt(params, optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
  const Tensor x = randn({32, 64}), y = randint(0, 10, {32});
  for (auto _ : state) {
    for (int step = 0; step < 1000; ++step) {
      opt.zero_grad();
      const Tensor h = relu(linear(relu(linear(x, w1, b1)), w2, b2));
      cross_entropy(linear(h, w3, b3), y).backward();
      opt.step();
    }
  }
}
double slowest_over_median(const std::vector<double>& v) {
  std::vector<double> s = v;
  std::sort(s.begin(), s.end());
  return s.back() / s[s.size() / 2];
}
BENCHMARK(BM_SmallMlpThousandSteps)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(21)
    ->ComputeStatistics("max/median", slowest_over_median, benchmark::StatisticUnit::kPercentage);

}  // namespace

BENCHMARK_MAIN();
