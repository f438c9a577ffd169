// The GPT-style transformer of testing/transformer_step.h on the CPU, at tiny sizes: one backward
// reaches every parameter with a finite gradient, a few AdamW steps over batches of varying
// length lower the loss, a seed repeats a run exactly, and bad sizes are refused. The same model
// on CUDA is what bench/peer/alloc_trace.cpp records its allocation trace from.
#include <doctest/doctest.h>

#include <cmath>

#include "anatomy/anatomy.h"
#include "anatomy/testing/transformer_step.h"

using namespace anatomy;
using anatomy::testing::TransformerBatch;
using anatomy::testing::TransformerModel;
using anatomy::testing::TransformerStepConfig;

namespace {

TransformerStepConfig tiny() {
  TransformerStepConfig c;
  c.layers = 2;
  c.hidden = 32;
  c.heads = 4;
  c.vocab = 64;
  c.batch = 4;
  c.seq_lens = {16, 12, 20, 16, 10, 18, 14, 16, 20, 12};
  c.adamw = {.lr = 1e-2, .weight_decay = 1e-2};
  return c;
}

}  // namespace

TEST_CASE("transformer step: one backward gives every parameter a finite gradient") {
  const TransformerStepConfig c = tiny();
  default_generator(DeviceType::CPU).manual_seed(c.seed);
  const TransformerModel model(c);
  const int64_t H = c.hidden;
  // Embeddings and their positions, 12 tensors per layer, the final norm.
  CHECK(model.parameters().size() == 2 + 12 * static_cast<size_t>(c.layers) + 2);
  CHECK(model.num_parameters() == c.vocab * H + 20 * H + c.layers * (12 * H * H + 13 * H) + 2 * H);
  const TransformerBatch b = anatomy::testing::transformer_batch(c, 16);
  CHECK(b.tokens.sizes() == IntArrayRef({c.batch, 16}));
  CHECK(((b.tokens + 1).remainder(c.vocab) == b.targets).all().item<bool>());
  const Tensor loss = model.loss(b.tokens, b.targets);
  CHECK(loss.dim() == 0);
  CHECK(loss.dtype() == DType::Float32);
  // Untrained, the prediction is close to uniform: the loss is near log(vocab).
  CHECK(std::fabs(loss.item<double>() - std::log(static_cast<double>(c.vocab))) < 0.5);
  loss.backward();
  const std::vector<Tensor> params = model.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    CAPTURE(i);
    const Tensor& p = params[i];
    const Tensor g = p.grad();
    REQUIRE(g.defined());
    CHECK(g.sizes() == p.sizes());
    CHECK(g.isfinite().all().item<bool>());
    CHECK(g.abs().sum().item<double>() > 0);  // every parameter takes part in the loss
  }
}

TEST_CASE("transformer step: AdamW steps over batches of varying length lower the loss") {
  const TransformerStepConfig c = tiny();
  const std::vector<double> losses = anatomy::testing::train_transformer(c);
  REQUIRE(losses.size() == c.seq_lens.size());
  for (double l : losses) CHECK(std::isfinite(l));
  MESSAGE("loss " << losses.front() << " -> " << losses.back());
  CHECK(losses.back() < losses.front() - 0.5);
  // The seed fixes weights, batches and dropout masks: the same run again gives the same losses.
  CHECK(anatomy::testing::train_transformer(c) == losses);
}

TEST_CASE("transformer step: bfloat16 parameters train too") {
  TransformerStepConfig c = tiny();
  c.dtype = DType::BFloat16;
  c.seq_lens = {12, 16, 10};
  const std::vector<double> losses = anatomy::testing::train_transformer(c);
  for (double l : losses) CHECK(std::isfinite(l));
}

TEST_CASE("transformer step: sizes that make no model are refused") {
  TransformerStepConfig c = tiny();
  c.heads = 5;  // 32 is not divisible by 5
  CHECK_THROWS_WITH_AS(TransformerModel{c}, doctest::Contains("hidden 32 is not divisible by heads 5"), ValueError);
  c = tiny();
  c.seq_lens = {};
  CHECK_THROWS_AS(TransformerModel{c}, ValueError);
  c = tiny();
  c.layers = 0;
  CHECK_THROWS_AS(TransformerModel{c}, ValueError);
  c = tiny();
  c.dtype = DType::Int32;
  CHECK_THROWS_AS(TransformerModel{c}, TypeError);
  c = tiny();
  default_generator(DeviceType::CPU).manual_seed(1);
  const TransformerModel model(c);
  const TransformerBatch too_long = anatomy::testing::transformer_batch(c, 21);  // the table holds 20 positions
  CHECK_THROWS_WITH_AS(model.loss(too_long.tokens, too_long.targets), doctest::Contains("exceeds"), ValueError);
}

TEST_CASE("transformer step: transformer_training_step makes the same model each time, and eager_step trains it") {
  TransformerStepConfig c = tiny();
  c.seq_lens = {16};
  default_generator(DeviceType::CPU).manual_seed(3);
  std::vector<std::vector<Tensor>> batches;
  for (int i = 0; i < 6; ++i) {
    const TransformerBatch b = anatomy::testing::transformer_batch(c, 16);
    batches.push_back({b.tokens, b.targets});
  }
  auto run = [&] {
    anatomy::testing::TrainingStep s = anatomy::testing::transformer_training_step(c);
    std::vector<double> losses;
    for (const auto& b : batches) losses.push_back(anatomy::testing::eager_step(s, b).item<double>());
    return losses;
  };
  const std::vector<double> losses = run();
  CHECK(losses.back() < losses.front());
  CHECK(run() == losses);
  anatomy::testing::TrainingStep s = anatomy::testing::transformer_training_step(c);
  CHECK_THROWS_WITH_AS(s.loss({batches[0][0]}), doctest::Contains("a batch is {tokens, targets}, got 1"), ValueError);
  // The graphed step needs CUDA tensors: make_graphed says so, whatever the build.
  CHECK_THROWS_WITH_AS(anatomy::testing::GraphedStep(std::move(s), batches[0]), doctest::Contains("CUDA tensor"),
                       ValueError);
}
