// nn::TransformerEncoderLayer (see transformer.h).
#include "anatomy/nn/transformer.h"

namespace anatomy::nn {

namespace {

std::string checked_activation(const std::string& activation) {
  ANATOMY_CHECK(activation == "relu" || activation == "gelu", ValueError,
                "TransformerEncoderLayer: activation must be 'relu' or 'gelu', got '{}'", activation);
  return activation;
}

}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward, double p,
                                                 std::string activation_, double layer_norm_eps, bool batch_first,
                                                 bool norm_first, bool bias, TensorOptions options)
    : Module("TransformerEncoderLayer"),
      activation(checked_activation(activation_)),
      norm_first(norm_first),
      self_attn(register_module("self_attn",
                                std::make_shared<MultiheadAttention>(d_model, nhead, p, bias, batch_first, options))),
      linear1(register_module("linear1", std::make_shared<Linear>(d_model, dim_feedforward, bias, options))),
      dropout(register_module("dropout", std::make_shared<Dropout>(p))),
      linear2(register_module("linear2", std::make_shared<Linear>(dim_feedforward, d_model, bias, options))),
      norm1(register_module(
          "norm1", std::make_shared<LayerNorm>(std::vector<int64_t>{d_model}, layer_norm_eps, true, bias, options))),
      norm2(register_module(
          "norm2", std::make_shared<LayerNorm>(std::vector<int64_t>{d_model}, layer_norm_eps, true, bias, options))),
      dropout1(register_module("dropout1", std::make_shared<Dropout>(p))),
      dropout2(register_module("dropout2", std::make_shared<Dropout>(p))) {}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const AttentionOptions& masks) {
  auto feed_forward = [this](const Tensor& x) {
    Tensor f = linear1->forward(x);
    f = activation == "gelu" ? f.gelu() : f.relu();
    return dropout2->forward(linear2->forward(dropout->forward(f)));
  };
  if (!norm_first) {
    const Tensor x = norm1->forward(src + dropout1->forward(self_attn->forward(src, src, src, masks)));
    return norm2->forward(x + feed_forward(x));
  }
  const Tensor h = norm1->forward(src);
  const Tensor x = src + dropout1->forward(self_attn->forward(h, h, h, masks));
  return x + feed_forward(norm2->forward(x));
}

}  // namespace anatomy::nn
