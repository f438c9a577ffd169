// GPU test of a graphed training step of a real model (docs/cuda-graphs.md, "Graphed forward and
// backward"): testing/'s GPT-style transformer (dropout 0, one sequence length, AdamW with
// capturable = true) trained five steps eagerly and five steps with make_graphed's forward and
// backward and a captured AdamW step (testing/training_step.h), from the same seed, gives the
// same losses. The step goes through embedding, causal attention, layer_norm, gelu, the tied
// output layer and log_softmax, and their backwards (index_put, the scatter of gather's).
#include <vector>

#include "anatomy/testing/transformer_step.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

constexpr int kSteps = 5;

testing::TransformerStepConfig graphable_config() {
  testing::TransformerStepConfig c;
  c.device = kCuda;
  c.seq_lens = {16};  // static inputs: one shape for every step
  c.dropout = 0;      // the same losses on both sides without relying on the generator's order
  c.adamw = {.lr = 1e-2, .weight_decay = 1e-2, .capturable = true};  // five steps lower the loss
  return c;
}

std::vector<std::vector<Tensor>> batches(const testing::TransformerStepConfig& c) {
  default_generator(DeviceType::CUDA).manual_seed(7);
  std::vector<std::vector<Tensor>> out;
  for (int i = 0; i < kSteps; ++i) {
    const testing::TransformerBatch b = testing::transformer_batch(c, c.seq_lens[0]);
    out.push_back({b.tokens, b.targets});
  }
  return out;
}

}  // namespace

TEST_CASE("cuda make_graphed: the transformer step trains to the eager losses, with a captured AdamW step") {
  ANATOMY_REQUIRE_GPU();
  const testing::TransformerStepConfig config = graphable_config();
  const auto data = batches(config);
  std::vector<double> eager_losses;
  {
    testing::TrainingStep eager = testing::transformer_training_step(config);
    for (const auto& b : data) eager_losses.push_back(testing::eager_step(eager, b).item<double>());
  }
  testing::GraphedStep graphed(testing::transformer_training_step(config), data[0]);
  // make_graphed's warm-up computes gradients and returns them: nothing reached .grad yet.
  for (const Tensor& p : graphed.training_step().params) CHECK_FALSE(p.grad().defined());
  std::vector<double> losses = {graphed.first_step(data[0]).item<double>()};
  std::vector<const void*> grad_memory;
  for (const Tensor& p : graphed.training_step().params) {
    REQUIRE(p.grad().defined());
    grad_memory.push_back(p.grad().data_ptr());
  }
  graphed.capture_optimizer();
  for (int i = 1; i < kSteps; ++i) losses.push_back(graphed.step(data[i]).item<double>());
  // The captured step read .grad where the capture saw it: every step added into the same memory.
  const std::vector<Tensor>& params = graphed.training_step().params;
  for (size_t k = 0; k < params.size(); ++k) CHECK(params[k].grad().data_ptr() == grad_memory[k]);
  REQUIRE(losses.size() == eager_losses.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    CAPTURE(i);
    CHECK(losses[i] == doctest::Approx(eager_losses[i]).epsilon(1e-4));
  }
  CHECK(losses.back() < losses.front());
}

TEST_CASE("cuda GraphedStep: the optimizer is captured after the first step, and steps after the capture") {
  ANATOMY_REQUIRE_GPU();
  const testing::TransformerStepConfig config = graphable_config();
  const auto data = batches(config);
  testing::GraphedStep graphed(testing::transformer_training_step(config), data[0]);
  CHECK_THROWS_WITH_AS(graphed.step(data[0]), doctest::Contains("capture_optimizer comes first"), ValueError);
  CHECK_THROWS_WITH_AS(graphed.capture_optimizer(), doctest::Contains("first_step comes first"), ValueError);
  // A batch of another shape is refused by the graphed call, naming make_graphed.
  const testing::TransformerBatch longer = testing::transformer_batch(config, 8);
  CHECK_THROWS_WITH_AS(graphed.first_step({longer.tokens, longer.targets}), doctest::Contains("make_graphed"),
                       ValueError);
}
