// nn::MaxPool2d, nn::AvgPool2d and nn::AdaptiveAvgPool2d: torch.nn's 2-D pooling layers over
// [N, C, H, W] or unbatched [C, H, W] inputs. Their reprs echo the arguments as given
// ("MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"); stride defaults
// to kernel_size.
#pragma once

#include <optional>
#include <tuple>

#include "anatomy/nn/layer_args.h"
#include "anatomy/nn/module.h"

namespace anatomy::nn {

// stride: kernel_size when empty (PyTorch's None), as the operators take it.
struct MaxPoolArgs {
  IntOrList stride = {};
  IntOrList padding = 0;
  IntOrList dilation = 1;
  bool ceil_mode = false;
};

// PyTorch's return_indices = true is forward_with_indices here (forward returns one tensor).
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(IntOrList kernel_size, const MaxPoolArgs& args = {});
  Tensor forward(const Tensor& input) override;
  // The maxima and their flat indices into each H x W plane (max_pool2d_with_indices).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;

  const IntOrList kernel_size;
  const IntOrList stride;
  const IntOrList padding;
  const IntOrList dilation;
  const bool ceil_mode;
};

struct AvgPoolArgs {
  IntOrList stride = {};  // kernel_size when empty
  IntOrList padding = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor_override = std::nullopt;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(IntOrList kernel_size, const AvgPoolArgs& args = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  const IntOrList kernel_size;
  const IntOrList stride;
  const IntOrList padding;
  const bool ceil_mode;
  const bool count_include_pad;
  const std::optional<int64_t> divisor_override;
};

// The mean over output_size adaptive windows of each plane (PyTorch's None entries, "keep the
// input's size", are not offered).
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(IntOrList output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  const IntOrList output_size;
};

}  // namespace anatomy::nn
