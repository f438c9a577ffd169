// GPU test of a training step captured whole into one graph (docs/cuda-graphs.md, "A whole step
// in one graph"; testing::CapturedStep): the loss, backward and the optimizer's step replayed
// together give the eager run's losses, for a small MLP under SGD with momentum and for
// testing/'s transformer under AdamW with capturable and foreach; the gradients live in the
// graph's memory, rewritten by every replay; a batch of another shape is refused and changes
// nothing.
#include <memory>
#include <vector>

#include "anatomy/testing/training_step.h"
#include "anatomy/testing/transformer_step.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

constexpr int kSteps = 5;

// Three linear layers 32 wide with relu between them, batch 16, SGD with momentum: the first
// eager step makes the momentum buffers that the captured step updates.
testing::TrainingStep mlp_step() {
  manual_seed(3);
  testing::TrainingStep s;
  for (int i = 0; i < 3; ++i) {
    s.params.push_back((randn({32, 32}) * 0.2).to(kCuda).requires_grad_());
    s.params.push_back((randn({32}) * 0.2).to(kCuda).requires_grad_());
  }
  const std::vector<Tensor> p = s.params;
  s.loss = [p](const std::vector<Tensor>& batch) {
    Tensor h = batch[0];
    for (size_t i = 0; i < p.size(); i += 2) {
      h = linear(h, p[i], p[i + 1]);
      if (i + 2 < p.size()) h = relu(h);
    }
    return (h - batch[1]).pow(2).mean();
  };
  s.optimizer = std::make_unique<optim::SGD>(s.params, optim::SGDOptions{.lr = 0.05, .momentum = 0.9});
  return s;
}

std::vector<std::vector<Tensor>> mlp_batches() {
  manual_seed(4);
  std::vector<std::vector<Tensor>> out;
  for (int i = 0; i < kSteps; ++i) out.push_back({randn({16, 32}).to(kCuda), randn({16, 32}).to(kCuda)});
  return out;
}

std::vector<double> eager_losses(testing::TrainingStep s, const std::vector<std::vector<Tensor>>& data) {
  std::vector<double> losses;
  for (const auto& b : data) losses.push_back(testing::eager_step(s, b).item<double>());
  return losses;
}

std::vector<double> captured_losses(testing::CapturedStep& c, const std::vector<std::vector<Tensor>>& data) {
  std::vector<double> losses = {c.first_loss().item<double>()};
  for (size_t i = 1; i < data.size(); ++i) losses.push_back(c.step(data[i]).item<double>());
  return losses;
}

void check_same_losses(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-4));
  }
  CHECK(got.back() < got.front());
}

}  // namespace

TEST_CASE("cuda CapturedStep: an MLP under SGD with momentum trains to the eager losses, one replay a step") {
  ANATOMY_REQUIRE_GPU();
  const auto data = mlp_batches();
  const std::vector<double> want = eager_losses(mlp_step(), data);
  testing::CapturedStep captured(mlp_step(), data[0]);
  REQUIRE(captured.graph().has_graph());
  // The capture's backward made every .grad in the graph's memory; the replays write them there.
  std::vector<const void*> grad_memory;
  for (const Tensor& p : captured.training_step().params) {
    REQUIRE(p.grad().defined());
    grad_memory.push_back(p.grad().data_ptr());
  }
  check_same_losses(captured_losses(captured, data), want);
  const std::vector<Tensor>& params = captured.training_step().params;
  for (size_t k = 0; k < params.size(); ++k) CHECK(params[k].grad().data_ptr() == grad_memory[k]);

  // The params after the steps are the eager run's.
  testing::TrainingStep eager = mlp_step();
  for (const auto& b : data) testing::eager_step(eager, b);
  for (size_t k = 0; k < params.size(); ++k) {
    CAPTURE(k);
    CHECK(allclose(params[k].detach().cpu(), eager.params[k].detach().cpu(), 1e-4, 1e-5));
  }
}

TEST_CASE("cuda CapturedStep: the transformer under capturable foreach AdamW trains to the eager losses") {
  ANATOMY_REQUIRE_GPU();
  testing::TransformerStepConfig config;
  config.device = kCuda;
  config.seq_lens = {16};  // static inputs: one shape for every step
  config.dropout = 0;      // the same losses on both sides without relying on the generator's order
  config.adamw = {.lr = 1e-2, .weight_decay = 1e-2, .capturable = true, .foreach = true};
  default_generator(DeviceType::CUDA).manual_seed(7);
  std::vector<std::vector<Tensor>> data;
  for (int i = 0; i < kSteps; ++i) {
    const testing::TransformerBatch b = testing::transformer_batch(config, config.seq_lens[0]);
    data.push_back({b.tokens, b.targets});
  }
  const std::vector<double> want = eager_losses(testing::transformer_training_step(config), data);
  testing::CapturedStep captured(testing::transformer_training_step(config), data[0]);
  check_same_losses(captured_losses(captured, data), want);
}

TEST_CASE("cuda CapturedStep: a batch of another shape or dtype is refused and changes nothing") {
  ANATOMY_REQUIRE_GPU();
  const auto data = mlp_batches();
  testing::CapturedStep captured(mlp_step(), data[0]);
  const Tensor before = captured.training_step().params[0].detach().cpu();
  CHECK_THROWS_WITH_AS(
      captured.step({randn({8, 32}).to(kCuda), data[1][1]}),
      doctest::Contains("CapturedStep::step: tensor 0 must match the sample's (fp32 [16, 32]), got fp32 [8, 32]"),
      ValueError);
  CHECK_THROWS_WITH_AS(captured.step({data[1][0].to(DType::Float64), data[1][1]}), doctest::Contains("tensor 0"),
                       ValueError);
  CHECK_THROWS_WITH_AS(captured.step({data[1][0]}), doctest::Contains("takes 2 tensors, got 1"), ValueError);
  CHECK(captured.training_step().params[0].detach().cpu().equal(before));
  CHECK_THROWS_WITH_AS(testing::CapturedStep(mlp_step(), {randn({16, 32}), randn({16, 32})}),
                       doctest::Contains("one CUDA device"), ValueError);
}
