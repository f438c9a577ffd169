// See model.h.
#include "anatomy/examples/char_gpt/model.h"

#include <vector>

namespace char_gpt {

using anatomy::Tensor;
namespace nn = anatomy::nn;

CharGpt::CharGpt(const ModelConfig& c, anatomy::Device device) : Module("CharGpt"), config(c) {
  tok_emb = register_module("tok_emb", std::make_shared<nn::Embedding>(c.vocab, c.d_model));
  pos_emb = register_module("pos_emb", std::make_shared<nn::Embedding>(c.seq, c.d_model));
  drop = register_module("drop", std::make_shared<nn::Dropout>(c.dropout));
  blocks = register_module("blocks", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < c.layers; ++i) {
    blocks->push_back(std::make_shared<nn::TransformerEncoderLayer>(
        c.d_model, c.heads, 4 * c.d_model, c.dropout, "gelu", 1e-5, /*batch_first=*/true, /*norm_first=*/true));
  }
  ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(std::vector<int64_t>{c.d_model}));
  head = register_module("head", std::make_shared<nn::Linear>(c.d_model, c.vocab));
  // nn::Embedding's N(0, 1) rows would dwarf the layers' outputs in the residual stream.
  nn::init::normal_(tok_emb->weight, 0.0, 0.02);
  nn::init::normal_(pos_emb->weight, 0.0, 0.02);
  to(device);
}

Tensor CharGpt::forward(const Tensor& tokens) {
  const int64_t t = tokens.size(1);
  ANATOMY_CHECK(t <= config.seq, ValueError, "CharGpt: a context of {} characters exceeds --seq {}", t, config.seq);
  const Tensor positions =
      anatomy::arange(t, anatomy::TensorOptions().dtype(anatomy::DType::Int64).device(tokens.device()));
  Tensor x = drop->forward(tok_emb->forward(tokens) + pos_emb->forward(positions));
  const nn::AttentionOptions causal{.is_causal = true};
  for (const std::shared_ptr<nn::Module>& m : *blocks) {
    auto* layer = static_cast<nn::TransformerEncoderLayer*>(m.get());
    if (checkpointing_) {
      // Only the layer's input is kept. The recomputation in backward draws the same dropout masks
      // (checkpoint puts the generators back) and runs under the autocast state of this forward,
      // which backward, outside the scope, would otherwise lack.
      const anatomy::DeviceType type = tokens.device().type();
      const bool amp = anatomy::autocast::is_enabled(type);
      const anatomy::DType amp_dtype = anatomy::autocast::get_dtype(type);
      auto run_layer = [layer, causal, type, amp, amp_dtype](const std::vector<Tensor>& in) {
        anatomy::autocast::AutocastGuard guard(type, amp_dtype, amp);
        return std::vector<Tensor>{layer->forward(in[0], causal)};
      };
      x = anatomy::autograd::checkpoint(run_layer, {x})[0];
    } else {
      x = layer->forward(x, causal);
    }
  }
  return head->forward(ln_f->forward(x));
}

}  // namespace char_gpt
