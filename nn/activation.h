// The activation modules (torch.nn's ReLU, SiLU, Tanh, GELU, Softmax) and Dropout: no parameters,
// one engine op each.
#pragma once

#include <string>

#include "anatomy/nn/module.h"

namespace anatomy::nn {

class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& input) override { return input.relu(); }
};

class SiLU : public Module {
 public:
  SiLU() : Module("SiLU") {}
  Tensor forward(const Tensor& input) override { return input.silu(); }
};

class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& input) override { return input.tanh(); }
};

// approximate: "none" (erf) or "tanh"; anything else is a ValueError.
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& input) override { return input.gelu(approximate); }
  std::string extra_repr() const override;
  const std::string approximate;
};

// softmax over dim (PyTorch's dim=None, a deprecated guess, is not offered).
class Softmax : public Module {
 public:
  explicit Softmax(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& input) override { return input.softmax(dim); }
  std::string extra_repr() const override;
  const int64_t dim;
};

// Zeroes elements with probability p and scales the rest by 1 / (1 - p) in training mode; the
// identity in eval mode. p outside [0, 1] is a ValueError. (PyTorch's inplace is not offered.)
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const double p;
};

}  // namespace anatomy::nn
