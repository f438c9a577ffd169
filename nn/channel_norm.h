// nn::BatchNorm1d, nn::BatchNorm2d and nn::GroupNorm: torch.nn's normalizations over the channel
// dim (dim 1), with their parameters, running statistics and reprs.
#pragma once

#include <optional>

#include "anatomy/nn/module.h"

namespace anatomy::nn {

// PyTorch's _BatchNorm. weight = ones and bias = zeros [num_features] (with affine); the buffers
// running_mean = zeros, running_var = ones and num_batches_tracked = 0 (an int64 scalar), with
// track_running_stats. In training the batch's statistics normalize and update the running ones:
// running = (1 - momentum) running + momentum batch (the variance unbiased), or with momentum =
// nullopt (PyTorch's None) the cumulative average, factor 1 / num_batches_tracked. In eval the
// running statistics normalize; without them (track_running_stats = false) the batch's do.
class BatchNorm : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_running_stats();
  void reset_parameters();

  const int64_t num_features;
  const double eps;
  const std::optional<double> momentum;
  const bool affine;
  const bool track_running_stats;
  Tensor& weight;
  Tensor& bias;
  Tensor& running_mean;
  Tensor& running_var;
  Tensor& num_batches_tracked;

 protected:
  BatchNorm(const std::string& type, int64_t num_features, double eps, std::optional<double> momentum, bool affine,
            bool track_running_stats, TensorOptions options);
  // The input's rank, checked by the subclass (ValueError naming the layer and the rank).
  virtual void check_input_dim(const Tensor& input) const = 0;
};

// [N, C] or [N, C, L].
class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true, TensorOptions options = {});

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// [N, C, H, W].
class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true, TensorOptions options = {});

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Normalizes each of num_groups groups of num_channels / num_groups channels over those channels
// and the spatial dims; weight = ones and bias = zeros [num_channels] with affine.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true,
            TensorOptions options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t num_groups;
  const int64_t num_channels;
  const double eps;
  const bool affine;
  Tensor& weight;
  Tensor& bias;
};

}  // namespace anatomy::nn
