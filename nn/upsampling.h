// nn::Upsample: torch.nn.Upsample on [N, C, H, W] inputs, by an output size or a scale factor,
// mode "nearest" or "bilinear" (align_corners for bilinear only, false by default).
//
//   nn::Upsample up({.scale_factor = 2.0, .mode = "bilinear"});
//   up.repr();  // "Upsample(scale_factor=2.0, mode='bilinear')"
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "anatomy/nn/layer_args.h"
#include "anatomy/nn/module.h"

namespace anatomy::nn {

// One scale factor for both dims or one each, as given (the repr echoes it); empty: none.
struct ScaleFactor {
  std::vector<double> values;
  bool scalar = false;
  ScaleFactor(double v) : values{v}, scalar(true) {}  // NOLINT(google-explicit-constructor): PyTorch's float
  ScaleFactor(std::initializer_list<double> v) : values(v) {}
};

// Exactly one of size and scale_factor (an empty one is not given; ValueError otherwise). The
// output is size, or each input size times its factor rounded down; with a factor, the operator
// also gets the factor itself (PyTorch's recompute_scale_factor = None), so the sampling positions
// are in / factor apart.
struct UpsampleArgs {
  IntOrList size = {};
  ScaleFactor scale_factor = {};
  std::string mode = "nearest";
  std::optional<bool> align_corners = std::nullopt;
};

class Upsample : public Module {
 public:
  explicit Upsample(const UpsampleArgs& args);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  const std::optional<IntOrList> size;
  const std::optional<ScaleFactor> scale_factor;
  const std::string mode;
  const std::optional<bool> align_corners;
};

}  // namespace anatomy::nn
