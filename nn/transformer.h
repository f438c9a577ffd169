// nn::TransformerEncoderLayer, as PyTorch's. Pre-norm (norm_first = true):
//   x = x + dropout1(self_attn(norm1(x)))
//   x = x + dropout2(linear2(dropout(activation(linear1(norm2(x))))))
// post-norm (norm_first = false, PyTorch's default):
//   x = norm1(x + dropout1(self_attn(x)))
//   x = norm2(x + dropout2(linear2(dropout(activation(linear1(x))))))
// Its submodules and state_dict keys are PyTorch's (self_attn, linear1, dropout, linear2, norm1,
// norm2, dropout1, dropout2), the same in both forms.
#pragma once

#include <string>

#include "anatomy/nn/activation.h"
#include "anatomy/nn/attention.h"
#include "anatomy/nn/linear.h"
#include "anatomy/nn/normalization.h"

namespace anatomy::nn {

class TransformerEncoderLayer : public Module {
 public:
  // activation: "relu" or "gelu" (ValueError otherwise).
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward = 2048, double dropout = 0.1,
                          std::string activation = "relu", double layer_norm_eps = 1e-5, bool batch_first = false,
                          bool norm_first = true, bool bias = true, TensorOptions options = {});

  // src as MultiheadAttention's query; src_mask is its attn_mask, src_key_padding_mask its
  // key_padding_mask.
  Tensor forward(const Tensor& src, const AttentionOptions& masks);
  Tensor forward(const Tensor& src) override { return forward(src, AttentionOptions{}); }

  const std::string activation;
  const bool norm_first;
  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> linear2;
  std::shared_ptr<LayerNorm> norm1;
  std::shared_ptr<LayerNorm> norm2;
  std::shared_ptr<Dropout> dropout1;
  std::shared_ptr<Dropout> dropout2;
};

}  // namespace anatomy::nn
