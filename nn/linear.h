// nn::Linear and nn::Embedding: torch.nn.Linear and torch.nn.Embedding with their default
// initialisation.
#pragma once

#include <optional>

#include "anatomy/nn/module.h"

namespace anatomy::nn {

// y = x W^T + b. weight [out_features, in_features] ~ kaiming_uniform_(a = sqrt(5)), i.e.
// U(-1/sqrt(in_features), 1/sqrt(in_features)); bias [out_features] ~ the same bound.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, TensorOptions options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t in_features;
  const int64_t out_features;
  Tensor& weight;
  Tensor& bias;  // undefined with bias = false
};

// Rows of weight [num_embeddings, embedding_dim] ~ N(0, 1), the padding_idx row zeroed. The
// padding row gets no gradient (its positions read a detached copy of the row), as PyTorch's.
// A negative padding_idx counts from the end.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt,
            TensorOptions options = {});
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t num_embeddings;
  const int64_t embedding_dim;
  const std::optional<int64_t> padding_idx;
  Tensor& weight;
};

}  // namespace anatomy::nn
