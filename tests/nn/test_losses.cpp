// The losses as a model's code uses them (docs/nn.md, "Losses"): the calls the page shows, the
// gradients at the points the op table's random samples do not reach (a logit of exactly 0,
// ignored rows), cross_entropy against log_softmax + nll_loss, and the fused operator's
// backward against the formula a recorded graph uses, which converts nothing beside its one call.
// Values and bad inputs of every loss are
// the op table's (testing/ops_loss.cpp).
#include <doctest/doctest.h>

#include <cmath>

#include "anatomy/anatomy.h"
#include "anatomy/profiler/profiler.h"

using namespace anatomy;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

TEST_CASE("losses: the calls of docs/nn.md") {
  manual_seed(3);
  const Tensor logits = randn({4, 10});
  const Tensor targets = tensor(std::vector<int64_t>{1, 0, 9, 4}, {4});
  const Tensor loss = cross_entropy(logits, targets);
  const Tensor smoothed = cross_entropy(logits, targets, std::nullopt, LossReduction::Mean, -100, 0.1);
  CHECK(loss.dim() == 0);
  CHECK(smoothed.item<double>() != loss.item<double>());
  const Tensor pred = randn({3, 2}), target = randn({3, 2});
  const Tensor per_row = mse_loss(pred, target, LossReduction::None);
  CHECK(per_row.sizes() == pred.sizes());
  CHECK(std::abs(mse_loss(pred, target).item<double>() - per_row.mean().item<double>()) < 1e-6);
}

TEST_CASE("losses: cross_entropy is log_softmax then nll_loss, for (N, C) and (N, C, T)") {
  manual_seed(4);
  const Tensor x = randn({3, 5, 4}, DType::Float64);
  const Tensor t = randint(0, 5, {3, 4}, DType::Int64);
  const Tensor w = rand({5}, DType::Float64) + 0.5;
  for (int64_t reduction : {0, 1, 2}) {
    const Tensor direct = cross_entropy(x, t, w, reduction);
    const Tensor composed = nll_loss(log_softmax(x, 1), t, w, reduction);
    CHECK(max_abs_diff(direct, composed) < 1e-12);
  }
}

TEST_CASE("losses: binary_cross_entropy_with_logits has the right gradient at a logit of 0") {
  // sigmoid(0) - t: -0.5 for t = 1, 0.5 for t = 0 (a pieced-together |x| would give 0 or -1).
  const Tensor x = zeros({2}, DType::Float64).requires_grad_();
  const Tensor t = tensor(std::vector<double>{1.0, 0.0}, {2}, DType::Float64);
  binary_cross_entropy_with_logits(x, t, std::nullopt, std::nullopt, LossReduction::Sum).backward();
  const Tensor g = x.grad();
  CHECK(g[0].item<double>() == doctest::Approx(-0.5));
  CHECK(g[1].item<double>() == doctest::Approx(0.5));
  // The loss there is log 2 per element.
  CHECK(binary_cross_entropy_with_logits(x.detach(), t).item<double>() == doctest::Approx(std::log(2.0)));
}

TEST_CASE("losses: ignored rows get no gradient and do not count in the mean") {
  manual_seed(5);
  const Tensor x = randn({4, 6}, DType::Float64).requires_grad_();
  const Tensor t = tensor(std::vector<int64_t>{2, -100, 5, -100}, {4});
  const Tensor loss = cross_entropy(x, t, std::nullopt, LossReduction::Mean, -100, 0.2);
  loss.backward();
  CHECK(x.grad()[1].abs().sum().item<double>() == 0.0);
  CHECK(x.grad()[3].abs().sum().item<double>() == 0.0);
  const Tensor kept =
      cross_entropy(x.detach().index_select(0, tensor(std::vector<int64_t>{0, 2}, {2})),
                    tensor(std::vector<int64_t>{2, 5}, {2}), std::nullopt, LossReduction::Mean, -100, 0.2);
  CHECK(loss.item<double>() == doctest::Approx(kept.item<double>()).epsilon(1e-12));
}

TEST_CASE("losses: the fused backward equals the recorded formula, weights and smoothing included") {
  manual_seed(6);
  const Tensor x = randn({5, 7}, DType::Float64).requires_grad_();
  const Tensor t = tensor(std::vector<int64_t>{0, 6, -100, 3, 3}, {5});
  const Tensor w = (rand({7}, DType::Float64) + 0.5).requires_grad_();
  const Tensor fused = autograd::grad({cross_entropy(x, t, w, LossReduction::Sum, -100, 0.3)}, {x})[0];
  const Tensor recorded_loss = cross_entropy(x, t, w, LossReduction::Sum, -100, 0.3);
  const std::vector<Tensor> recorded = autograd::grad({recorded_loss}, {x, w}, {}, true, true);
  CHECK(max_abs_diff(fused, recorded[0].detach()) < 1e-12);
  // And both match finite differences of the loss in the weights.
  const Tensor dw = autograd::grad({cross_entropy(x, t, w, LossReduction::Sum, -100, 0.3)}, {w})[0];
  CHECK(autograd::gradcheck(
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{cross_entropy(in[0], t, in[1], LossReduction::Mean, -100, 0.3)};
      },
      {x, w}));
  CHECK(max_abs_diff(dw, recorded[1].detach()) < 1e-12);
}

TEST_CASE("losses: cross_entropy's fused backward reads bf16 logits as they are, with no fp32 copy beside it") {
  // A copy of a GPT's (8192, 50257) logits in fp32 would cost more than the fused kernel.
  const Tensor x = randn({4, 11}).to(DType::BFloat16).requires_grad_();
  const Tensor t = tensor(std::vector<int64_t>{1, 0, 10, 3}, {4});
  const Tensor loss = cross_entropy(x, t, std::nullopt, LossReduction::Sum);
  profiler::Profile prof;
  loss.backward();
  prof.stop();
  const std::vector<profiler::Event>& events = prof.events();
  auto inside_fused = [&](int64_t i) {
    for (; i >= 0; i = events[static_cast<size_t>(i)].parent) {
      if (events[static_cast<size_t>(i)].name == "aten::_cross_entropy_rows_backward") return true;
    }
    return false;
  };
  int fused = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const profiler::Event& e = events[i];
    if (e.name == "aten::_cross_entropy_rows_backward") ++fused;
    const bool logits_copy =
        !e.input_shapes.empty() && e.input_shapes[0].rfind("[4, 11]", 0) == 0 && e.name.find("to") != std::string::npos;
    CHECK_MESSAGE(!(logits_copy && !inside_fused(static_cast<int64_t>(i))), e.name, " ", e.input_shapes[0]);
  }
  CHECK(fused == 1);
  CHECK(x.grad().dtype() == DType::BFloat16);
}
