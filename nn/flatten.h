// nn::Flatten: torch.nn.Flatten, dims start_dim..end_dim of the input merged into one (by default
// all but the batch dim), as a view where the strides allow.
#pragma once

#include "anatomy/nn/module.h"

namespace anatomy::nn {

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& input) override { return input.flatten(start_dim, end_dim); }
  std::string extra_repr() const override { return fmt::format("start_dim={}, end_dim={}", start_dim, end_dim); }

  const int64_t start_dim;
  const int64_t end_dim;
};

}  // namespace anatomy::nn
