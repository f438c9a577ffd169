// A small GPT-style transformer and its training step, built from anatomy's own operators,
// autograd and AdamW: the real workload whose allocations the caching allocator's fragmentation
// figure is measured on (testing/alloc_trace_record.h records them; bench/peer/alloc_trace.cpp
// replays them next to PyTorch's allocator), and a training loop the CPU tests run at tiny sizes.
//
// The model, as GPT-2: token and position embeddings (the token embedding tied to the output
// layer), then per layer x = x + dropout(proj(attention(layer_norm(x)))) with causal
// scaled_dot_product_attention (attention dropout inside) and x = x + dropout(fc2(gelu(fc1(
// layer_norm(x))))), a final layer_norm and the logits. The loss is cross-entropy written as
// log_softmax in fp32, gather of the targets' log-probabilities and a negated mean. A step is
// zero_grad (set_to_none), forward, backward, AdamW step.
//
// The data is random tokens whose target is the next token id (token + 1 mod vocab): learnable by
// the embeddings alone, so a few steps lower the loss.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/testing/training_step.h"

namespace anatomy::testing {

struct TransformerStepConfig {
  int64_t layers = 2;
  int64_t hidden = 64;
  int64_t heads = 4;
  int64_t vocab = 128;
  int64_t batch = 2;
  // One training step per entry, each with its own sequence length (batches of varying length);
  // the position table holds the longest.
  std::vector<int64_t> seq_lens = {16, 12, 20};
  DType dtype = DType::Float32;  // parameters and activations (the loss is computed in fp32)
  Device device = Device(DeviceType::CPU);
  double dropout = 0.1;  // embeddings, attention probabilities, both residual branches
  optim::AdamWOptions adamw{.lr = 1e-3, .weight_decay = 1e-2};
  uint64_t seed = 2026;  // the device's generator: initial weights, tokens, dropout masks
};

// The model's parameters, on the config's device and dtype, requiring grad.
class TransformerModel {
 public:
  // Checks the sizes (ValueError: hidden divisible by heads, everything positive, seq_lens not
  // empty) and draws the weights (normal, std 0.02; biases zero, layer norms one and zero).
  explicit TransformerModel(const TransformerStepConfig& config);

  // The mean cross-entropy of predicting `targets` from `tokens` (both int64 [batch, seq]).
  Tensor loss(const Tensor& tokens, const Tensor& targets) const;
  std::vector<Tensor> parameters() const;
  int64_t num_parameters() const;  // elements

 private:
  struct Layer {
    Tensor ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc1_w, fc1_b, fc2_w, fc2_b;
  };
  Tensor block(const Layer& l, const Tensor& x) const;

  TransformerStepConfig config_;
  Tensor wte_, wpe_, lnf_w_, lnf_b_;
  std::vector<Layer> layers_;
};

// One batch: tokens uniform in [0, vocab), targets token + 1 mod vocab; int64 [batch, seq_len]
// on the config's device.
struct TransformerBatch {
  Tensor tokens, targets;
};
TransformerBatch transformer_batch(const TransformerStepConfig& config, int64_t seq_len);

// The model, its optimizer and the training step.
class TransformerTrainer {
 public:
  explicit TransformerTrainer(const TransformerStepConfig& config);
  // zero_grad (set_to_none), the loss, backward, the AdamW step; returns the loss, detached.
  Tensor step(const TransformerBatch& batch);
  const TransformerModel& model() const { return model_; }

 private:
  TransformerModel model_;
  optim::AdamW optimizer_;
};

// The model and its AdamW as a TrainingStep (training_step.h) whose loss takes {tokens, targets}:
// the device's generator seeded with config.seed first, so that every call makes the same model.
TrainingStep transformer_training_step(const TransformerStepConfig& config);

// Seeds the device's generator, builds the model and optimizer and runs one step per entry of
// config.seq_lens, each on a fresh batch; returns the losses (read back once, after the last
// step). Everything it allocated is freed when it returns: a trace recorded around it balances.
std::vector<double> train_transformer(const TransformerStepConfig& config);

}  // namespace anatomy::testing
