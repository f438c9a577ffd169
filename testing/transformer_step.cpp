// The GPT-style transformer and its training step (see transformer_step.h).
#include "anatomy/testing/transformer_step.h"

#include <algorithm>
#include <cmath>

#include "anatomy/autograd/grad_mode.h"

namespace anatomy::testing {
namespace {

void check_config(const TransformerStepConfig& c) {
  const char* who = "TransformerModel";
  ANATOMY_CHECK(c.layers > 0 && c.hidden > 0 && c.heads > 0 && c.vocab > 0 && c.batch > 0, ValueError,
                "{}: layers {}, hidden {}, heads {}, vocab {} and batch {} must be positive", who, c.layers, c.hidden,
                c.heads, c.vocab, c.batch);
  ANATOMY_CHECK(c.hidden % c.heads == 0, ValueError, "{}: hidden {} is not divisible by heads {}", who, c.hidden,
                c.heads);
  ANATOMY_CHECK(!c.seq_lens.empty(), ValueError, "{}: seq_lens is empty (one training step per entry)", who);
  for (int64_t s : c.seq_lens) {
    ANATOMY_CHECK(s > 0, ValueError, "{}: sequence length {} must be positive", who, s);
  }
  ANATOMY_CHECK(is_floating(c.dtype), TypeError, "{}: expected a floating dtype, got {}", who, name(c.dtype));
}

}  // namespace

TransformerModel::TransformerModel(const TransformerStepConfig& config) : config_(config) {
  check_config(config_);
  autograd::NoGradGuard no_grad;
  const TensorOptions fp32 = TensorOptions().dtype(DType::Float32).device(config_.device);
  // Drawn in fp32 and rounded once to the model's dtype, so every dtype starts from the same draw.
  auto param = [&](const Tensor& init) {
    Tensor p = init.dtype() == config_.dtype ? init : init.to(config_.dtype);
    return p.requires_grad_();
  };
  auto normal = [&](std::vector<int64_t> shape) { return param(randn(shape, fp32) * 0.02); };
  auto zero = [&](int64_t n) { return param(zeros({n}, fp32)); };
  auto one = [&](int64_t n) { return param(ones({n}, fp32)); };
  const int64_t H = config_.hidden;
  const int64_t max_seq = *std::max_element(config_.seq_lens.begin(), config_.seq_lens.end());
  wte_ = normal({config_.vocab, H});
  wpe_ = normal({max_seq, H});
  for (int64_t i = 0; i < config_.layers; ++i) {
    layers_.push_back(Layer{one(H), zero(H), normal({3 * H, H}), zero(3 * H), normal({H, H}), zero(H), one(H), zero(H),
                            normal({4 * H, H}), zero(4 * H), normal({H, 4 * H}), zero(H)});
  }
  lnf_w_ = one(H);
  lnf_b_ = zero(H);
}

Tensor TransformerModel::block(const Layer& l, const Tensor& x) const {
  const int64_t B = x.size(0), T = x.size(1), H = config_.hidden, nh = config_.heads, hd = H / nh;
  const double p = config_.dropout;
  // Attention: q, k, v as [B, heads, T, head_dim] views of one projection.
  const Tensor qkv = linear(layer_norm(x, {H}, l.ln1_w, l.ln1_b), l.qkv_w, l.qkv_b);
  std::vector<Tensor> parts = qkv.chunk(3, -1);
  for (Tensor& t : parts) t = t.view({B, T, nh, hd}).transpose(1, 2);
  const Tensor ctx = scaled_dot_product_attention(parts[0], parts[1], parts[2], std::nullopt, p, /*is_causal=*/true)
                         .transpose(1, 2)
                         .reshape({B, T, H});
  const Tensor x_mid = x + dropout(linear(ctx, l.proj_w, l.proj_b), p, true);
  // The MLP.
  const Tensor h = gelu(linear(layer_norm(x_mid, {H}, l.ln2_w, l.ln2_b), l.fc1_w, l.fc1_b), "tanh");
  return x_mid + dropout(linear(h, l.fc2_w, l.fc2_b), p, true);
}

Tensor TransformerModel::loss(const Tensor& tokens, const Tensor& targets) const {
  ANATOMY_CHECK(tokens.dim() == 2 && targets.sizes() == tokens.sizes(), ValueError,
                "TransformerModel::loss: expected tokens and targets of one shape [batch, seq], got {}-D and {}-D",
                tokens.dim(), targets.dim());
  const int64_t T = tokens.size(1);
  ANATOMY_CHECK(T <= wpe_.size(0), ValueError,
                "TransformerModel::loss: sequence length {} exceeds the position table's {}", T, wpe_.size(0));
  const Tensor positions = arange(T, TensorOptions().dtype(DType::Int64).device(config_.device));
  Tensor x = dropout(embedding(wte_, tokens) + embedding(wpe_, positions), config_.dropout, true);
  for (const Layer& l : layers_) x = block(l, x);
  x = layer_norm(x, {config_.hidden}, lnf_w_, lnf_b_);
  const Tensor logits = linear(x, wte_);  // tied to the token embedding
  // Cross-entropy: the targets' log-probabilities, computed in fp32.
  const Tensor log_probs = log_softmax(logits, -1, DType::Float32);
  return gather(log_probs, -1, targets.unsqueeze(-1)).mean().neg();
}

std::vector<Tensor> TransformerModel::parameters() const {
  std::vector<Tensor> out = {wte_, wpe_};
  for (const Layer& l : layers_) {
    for (const Tensor& t : {l.ln1_w, l.ln1_b, l.qkv_w, l.qkv_b, l.proj_w, l.proj_b, l.ln2_w, l.ln2_b, l.fc1_w, l.fc1_b,
                            l.fc2_w, l.fc2_b}) {
      out.push_back(t);
    }
  }
  out.push_back(lnf_w_);
  out.push_back(lnf_b_);
  return out;
}

int64_t TransformerModel::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& t : parameters()) n += t.numel();
  return n;
}

TransformerBatch transformer_batch(const TransformerStepConfig& config, int64_t seq_len) {
  const TensorOptions ids = TensorOptions().dtype(DType::Int64).device(config.device);
  Tensor tokens = randint(0, config.vocab, {config.batch, seq_len}, ids);
  Tensor targets = (tokens + 1).remainder(config.vocab);
  return {tokens, targets};
}

TransformerTrainer::TransformerTrainer(const TransformerStepConfig& config)
    : model_(config), optimizer_(model_.parameters(), config.adamw) {}

Tensor TransformerTrainer::step(const TransformerBatch& batch) {
  optimizer_.zero_grad();  // set_to_none: the gradients' memory goes back before the forward
  Tensor loss = model_.loss(batch.tokens, batch.targets);
  loss.backward();
  optimizer_.step();
  return loss.detach();
}

TrainingStep transformer_training_step(const TransformerStepConfig& config) {
  default_generator(config.device.type()).manual_seed(config.seed);
  auto model = std::make_shared<TransformerModel>(config);
  TrainingStep s;
  s.params = model->parameters();
  s.loss = [model](const std::vector<Tensor>& batch) {
    ANATOMY_CHECK(batch.size() == 2, ValueError,
                  "transformer_training_step: a batch is {{tokens, targets}}, got {} tensors", batch.size());
    return model->loss(batch[0], batch[1]);
  };
  s.optimizer = std::make_unique<optim::AdamW>(s.params, config.adamw);
  return s;
}

std::vector<double> train_transformer(const TransformerStepConfig& config) {
  default_generator(config.device.type()).manual_seed(config.seed);
  std::vector<Tensor> losses;
  {
    TransformerTrainer trainer(config);
    for (int64_t seq_len : config.seq_lens) losses.push_back(trainer.step(transformer_batch(config, seq_len)));
  }
  std::vector<double> out;
  for (const Tensor& l : losses) out.push_back(l.item<double>());
  return out;
}

}  // namespace anatomy::testing
