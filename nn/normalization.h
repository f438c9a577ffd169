// nn::LayerNorm and nn::RMSNorm over the trailing normalized_shape dims, as torch.nn's.
#pragma once

#include <optional>
#include <vector>

#include "anatomy/nn/module.h"

namespace anatomy::nn {

// weight = ones, bias = zeros (each only with elementwise_affine; bias also needs bias = true).
class LayerNorm : public Module {
 public:
  LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5, bool elementwise_affine = true, bool bias = true,
            TensorOptions options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();

  const std::vector<int64_t> normalized_shape;
  const double eps;
  const bool elementwise_affine;
  Tensor& weight;
  Tensor& bias;
};

// weight = ones with elementwise_affine; eps defaults to the input dtype's machine epsilon.
class RMSNorm : public Module {
 public:
  RMSNorm(std::vector<int64_t> normalized_shape, std::optional<double> eps = std::nullopt,
          bool elementwise_affine = true, TensorOptions options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();

  const std::vector<int64_t> normalized_shape;
  const std::optional<double> eps;
  const bool elementwise_affine;
  Tensor& weight;
};

}  // namespace anatomy::nn
