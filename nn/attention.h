// nn::MultiheadAttention: torch.nn.MultiheadAttention's parameters, initialisation and masks on
// the engine's scaled_dot_product_attention.
//
// Differences from PyTorch: key and value have embed_dim features (no kdim / vdim); forward
// returns the output and forward_with_weights the output and the weights; need_weights defaults to
// false (the weights path forms the scores itself instead of the fused attention); is_causal needs
// no attn_mask (it adds the causal mask, top-left aligned, to any other mask rather than being a
// hint about attn_mask).
#pragma once

#include <optional>
#include <utility>

#include "anatomy/nn/linear.h"
#include "anatomy/nn/module.h"

namespace anatomy::nn {

struct AttentionOptions {
  // [N, S] (or [S] unbatched): true (or -inf when floating) marks a key position to ignore.
  std::optional<Tensor> key_padding_mask = std::nullopt;
  // [L, S] or [N * num_heads, L, S]: bool true = not allowed to attend (PyTorch's meaning), or
  // floating, added to the attention scores.
  std::optional<Tensor> attn_mask = std::nullopt;
  bool is_causal = false;
  // forward_with_weights also returns the attention weights (after dropout, as PyTorch's):
  // averaged over the heads [N, L, S], or per head [N, num_heads, L, S] (unbatched: no N).
  bool need_weights = false;
  bool average_attn_weights = true;
};

class MultiheadAttention : public Module {
 public:
  // embed_dim must be divisible by num_heads (ValueError). in_proj_weight [3E, E] ~ xavier_uniform_,
  // in_proj_bias and out_proj.bias zeros, out_proj.weight as Linear's.
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true,
                     bool batch_first = false, TensorOptions options = {});

  // query [L, N, E] ([N, L, E] with batch_first, [L, E] unbatched); key and value [S, N, E] likewise.
  Tensor forward(const Tensor& query, const Tensor& key, const Tensor& value, const AttentionOptions& options = {});
  // The output and, with options.need_weights, the attention weights (undefined otherwise).
  std::pair<Tensor, Tensor> forward_with_weights(const Tensor& query, const Tensor& key, const Tensor& value,
                                                 const AttentionOptions& options);
  // Self-attention without masks.
  Tensor forward(const Tensor& input) override { return forward(input, input, input); }
  void reset_parameters();

  const int64_t embed_dim;
  const int64_t num_heads;
  const int64_t head_dim;
  const double dropout;
  const bool batch_first;
  Tensor& in_proj_weight;
  Tensor& in_proj_bias;  // undefined with bias = false
  std::shared_ptr<Linear> out_proj;
};

}  // namespace anatomy::nn
