// GPU tests of cuda::make_graphed (graphed/make_graphed.h; docs/cuda-graphs.md): an MLP trains
// with a graphed forward and backward and a captured SGD step to the eager run's losses, the
// replayed backward accumulates into the params' .grad, and inputs that do not match the samples
// are refused.
#include <vector>

#include "anatomy/cuda.h"
#include "anatomy/graphed/make_graphed.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

struct Mlp {
  Tensor w1, b1, w2, b2;
  std::vector<Tensor> params() const { return {w1, b1, w2, b2}; }
  Tensor loss(const Tensor& x, const Tensor& target) const {
    Tensor h = (x.matmul(w1) + b1).relu();
    return (h.matmul(w2) + b2 - target).pow(2).mean();
  }
};

Mlp make_mlp() {
  manual_seed(3);
  auto leaf = [](IntArrayRef shape, double scale) { return (randn(shape) * scale).to(kCuda).requires_grad_(); };
  return {leaf({32, 64}, 0.2), leaf({64}, 0.0), leaf({64, 8}, 0.2), leaf({8}, 0.0)};
}

std::vector<std::pair<Tensor, Tensor>> batches(int n) {
  manual_seed(11);
  std::vector<std::pair<Tensor, Tensor>> out;
  for (int i = 0; i < n; ++i) out.emplace_back(randn({16, 32}).to(kCuda), randn({16, 8}).to(kCuda));
  return out;
}

}  // namespace

TEST_CASE("cuda make_graphed: an MLP trains to the eager losses with a graphed step") {
  ANATOMY_REQUIRE_GPU();
  const auto data = batches(6);
  std::vector<double> eager_losses;
  {
    Mlp m = make_mlp();
    optim::SGD opt(m.params(), {.lr = 0.05, .momentum = 0.9});
    for (const auto& [x, y] : data) {
      opt.zero_grad(/*set_to_none=*/false);
      Tensor loss = m.loss(x, y);
      loss.backward();
      opt.step();
      eager_losses.push_back(loss.item<double>());
    }
  }
  Mlp m = make_mlp();
  optim::SGD opt(m.params(), {.lr = 0.05, .momentum = 0.9});
  Tensor x = data[0].first.clone(), y = data[0].second.clone();
  cuda::GraphedCallable step = cuda::make_graphed(
      [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{m.loss(in[0], in[1])}; }, {x, y}, m.params());
  // The warm-up moved no parameter: make_graphed only computes gradients, and returns them.
  for (const Tensor& p : m.params()) CHECK_FALSE(p.grad().defined());
  // The optimizer step captured too, after one eager step made .grad and the momentum buffers:
  // that first step is the eager run's first step.
  std::vector<double> losses;
  opt.zero_grad(false);
  Tensor first = step({data[0].first, data[0].second})[0];
  first.backward();
  opt.step();
  losses.push_back(first.item<double>());
  cuda::Graph opt_graph;
  {
    cuda::GraphCapture capture(opt_graph);
    opt.step();
  }
  // The capture recorded a step without running it: the params are as the first step left them.
  for (size_t i = 1; i < data.size(); ++i) {
    for (const Tensor& p : m.params()) p.grad().zero_();
    Tensor loss = step({data[i].first, data[i].second})[0];
    loss.backward();
    opt_graph.replay();
    losses.push_back(loss.item<double>());
  }
  REQUIRE(losses.size() == eager_losses.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    CAPTURE(i);
    CHECK(losses[i] == doctest::Approx(eager_losses[i]).epsilon(1e-4));
  }
  CHECK(losses.back() < losses.front());
}

TEST_CASE("cuda make_graphed: gradients flow to inputs that require grad, and calls are checked") {
  ANATOMY_REQUIRE_GPU();
  Tensor w = randn({8, 4}).to(kCuda).requires_grad_();
  Tensor x = randn({3, 8}).to(kCuda).requires_grad_();
  cuda::GraphedCallable f = cuda::make_graphed(
      [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].matmul(w).tanh().sum()}; }, {x}, {w});
  Tensor x2 = randn({3, 8}).to(kCuda).requires_grad_();
  Tensor out = f({x2})[0];
  out.backward();
  Tensor x3 = x2.detach().clone().requires_grad_();
  Tensor w3 = w.detach().clone().requires_grad_();
  x3.matmul(w3).tanh().sum().backward();
  CHECK(out.item<double>() == doctest::Approx(x3.matmul(w3).tanh().sum().item<double>()).epsilon(1e-5));
  CHECK(allclose(x2.grad().cpu(), x3.grad().cpu(), 1e-5, 1e-5));
  CHECK(allclose(w.grad().cpu(), w3.grad().cpu(), 1e-5, 1e-5));
  CHECK_THROWS_WITH_AS(f({randn({4, 8}).to(kCuda)}), doctest::Contains("must match the sample input"), ValueError);
  CHECK_THROWS_WITH_AS(f({}), doctest::Contains("takes 1 inputs, got 0"), ValueError);
}
