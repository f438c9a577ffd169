// The character-level GPT: token and position embeddings, `layers` pre-norm transformer encoder
// layers under a causal mask (GELU MLP of 4 * d_model), a final LayerNorm and a linear head to
// the vocabulary, all from nn/.
#pragma once

#include <memory>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

namespace char_gpt {

struct ModelConfig {
  int64_t vocab = 0;
  int64_t seq = 0;  // the longest context: the position table's rows
  int64_t layers = 4;
  int64_t d_model = 256;
  int64_t heads = 8;
  double dropout = 0.1;
};

class CharGpt : public anatomy::nn::Module {
 public:
  // The embeddings are drawn from N(0, 0.02) (GPT-2's), the other layers keep nn's PyTorch
  // initialisation; every draw comes from the CPU generator, then the model moves to `device`.
  CharGpt(const ModelConfig& config, anatomy::Device device);

  // tokens int64 [batch, t] with t <= seq: the logits [batch, t, vocab].
  anatomy::Tensor forward(const anatomy::Tensor& tokens) override;
  // With checkpointing, each layer's activations are recomputed in backward instead of kept.
  void set_checkpointing(bool on) { checkpointing_ = on; }

  const ModelConfig config;
  std::shared_ptr<anatomy::nn::Embedding> tok_emb;
  std::shared_ptr<anatomy::nn::Embedding> pos_emb;
  std::shared_ptr<anatomy::nn::Dropout> drop;
  std::shared_ptr<anatomy::nn::ModuleList> blocks;
  std::shared_ptr<anatomy::nn::LayerNorm> ln_f;
  std::shared_ptr<anatomy::nn::Linear> head;

 private:
  bool checkpointing_ = false;
};

}  // namespace char_gpt
