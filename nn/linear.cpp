// nn::Linear and nn::Embedding (see linear.h).
#include "anatomy/nn/linear.h"

#include <cmath>

#include "anatomy/nn/init.h"
#include "anatomy/nn/layer_args.h"

namespace anatomy::nn {

Linear::Linear(int64_t in, int64_t out, bool with_bias, TensorOptions options)
    : Module("Linear"),
      in_features(checked_size("Linear", "in_features", in)),
      out_features(checked_size("Linear", "out_features", out)),
      weight(register_parameter("weight", empty({out, in}, options))),
      bias(register_parameter("bias", with_bias ? empty({out}, options) : Tensor())) {
  reset_parameters();
}

void Linear::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Linear::forward(const Tensor& input) {
  return linear(input, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt);
}

std::string Linear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_features, out_features, py_bool(bias.defined()));
}

namespace {

std::optional<int64_t> checked_padding_idx(std::optional<int64_t> padding_idx, int64_t num_embeddings) {
  if (!padding_idx) return std::nullopt;
  ANATOMY_CHECK(*padding_idx >= -num_embeddings && *padding_idx < num_embeddings, ValueError,
                "Embedding: padding_idx {} must be within num_embeddings {}", *padding_idx, num_embeddings);
  return *padding_idx < 0 ? *padding_idx + num_embeddings : *padding_idx;
}

}  // namespace

Embedding::Embedding(int64_t num, int64_t dim, std::optional<int64_t> pad, TensorOptions options)
    : Module("Embedding"),
      num_embeddings(checked_size("Embedding", "num_embeddings", num)),
      embedding_dim(checked_size("Embedding", "embedding_dim", dim)),
      padding_idx(checked_padding_idx(pad, num)),
      weight(register_parameter("weight", empty({num, dim}, options))) {
  reset_parameters();
}

void Embedding::reset_parameters() {
  init::normal_(weight);
  if (padding_idx) {
    autograd::NoGradGuard no_grad;
    weight.select(0, *padding_idx).fill_(0);
  }
}

Tensor Embedding::forward(const Tensor& indices) {
  Tensor out = embedding(weight, indices);
  if (!padding_idx) return out;
  // The padding positions read the row without history, so the row's gradient stays zero.
  Tensor is_pad = indices.eq(*padding_idx).unsqueeze(-1);
  return embedding(weight.detach(), indices).where(is_pad, out);
}

std::string Embedding::extra_repr() const {
  std::string out = fmt::format("{}, {}", num_embeddings, embedding_dim);
  if (padding_idx) out += fmt::format(", padding_idx={}", *padding_idx);
  return out;
}

}  // namespace anatomy::nn
