// nn::Conv1d, nn::Conv2d and nn::ConvTranspose2d: torch.nn's convolution layers, with their
// constructor arguments, default initialisation, state_dict keys and reprs.
//
//   nn::Conv2d conv(3, 16, 3, {.padding = 1, .bias = false});
//   conv.repr();  // "Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)"
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "anatomy/nn/layer_args.h"
#include "anatomy/nn/module.h"

namespace anatomy::nn {

// A convolution's padding: ints (one for every spatial dim or one each), or "same" / "valid".
struct ConvPadding {
  std::variant<IntOrList, std::string> value;
  ConvPadding(int64_t v) : value(IntOrList(v)) {}  // NOLINT(google-explicit-constructor): PyTorch's int
  ConvPadding(std::initializer_list<int64_t> v) : value(IntOrList(v)) {}
  // A string literal binds here and a literal 0 cannot (as it could to a const char*).
  template <size_t N>
  ConvPadding(const char (&mode)[N]) : value(std::string(mode)) {}  // NOLINT(google-explicit-constructor)
  ConvPadding(std::string mode) : value(std::move(mode)) {}         // NOLINT(google-explicit-constructor)
};

// Conv1d's and Conv2d's keyword arguments, PyTorch's names and defaults. padding_mode "zeros" is
// the one implemented; "reflect", "replicate" and "circular" are NotImplementedError.
struct ConvArgs {
  IntOrList stride = 1;
  ConvPadding padding = 0;
  IntOrList dilation = 1;
  int64_t groups = 1;
  bool bias = true;
  std::string padding_mode = "zeros";
};

// ConvTranspose2d's keyword arguments (PyTorch's order: dilation comes after groups and bias).
struct ConvTransposeArgs {
  IntOrList stride = 1;
  IntOrList padding = 0;
  IntOrList output_padding = 0;
  int64_t groups = 1;
  bool bias = true;
  IntOrList dilation = 1;
  std::string padding_mode = "zeros";
};

// What the convolutions share (PyTorch's _ConvNd): the checked arguments, one value per spatial
// dim, the parameters and their initialisation, the repr. weight is [out_channels, in_channels /
// groups, *kernel_size], or [in_channels, out_channels / groups, *kernel_size] when transposed;
// weight ~ kaiming_uniform_(a = sqrt(5)), bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in
// the weight's (size(1) times the kernel's elements).
class ConvNd : public Module {
 public:
  struct Checked;  // the arguments after their checks (conv.cpp)
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t in_channels;
  const int64_t out_channels;
  const std::vector<int64_t> kernel_size;
  const std::vector<int64_t> stride;
  // The ints, one a dim; empty when padding is a string (padding_string).
  const std::vector<int64_t> padding;
  const std::string padding_string;
  const std::vector<int64_t> dilation;
  const bool transposed;
  const std::vector<int64_t> output_padding;
  const int64_t groups;
  const std::string padding_mode;
  Tensor& weight;
  Tensor& bias;  // undefined with bias = false

 protected:
  ConvNd(const std::string& type, Checked args, TensorOptions options);
  std::optional<Tensor> maybe_bias() const { return bias.defined() ? std::optional<Tensor>(bias) : std::nullopt; }
};

class Conv1d : public ConvNd {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, IntOrList kernel_size, const ConvArgs& args = {},
         TensorOptions options = {});
  // [N, C_in, L] or unbatched [C_in, L].
  Tensor forward(const Tensor& input) override;
};

class Conv2d : public ConvNd {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, IntOrList kernel_size, const ConvArgs& args = {},
         TensorOptions options = {});
  // [N, C_in, H, W] or unbatched [C_in, H, W].
  Tensor forward(const Tensor& input) override;
};

class ConvTranspose2d : public ConvNd {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, IntOrList kernel_size, const ConvTransposeArgs& args = {},
                  TensorOptions options = {});
  Tensor forward(const Tensor& input) override;
  // The output of spatial size output_size (its last two values): the output_padding that gives
  // it, each size between the smallest output and that plus stride - 1 (ValueError otherwise).
  Tensor forward(const Tensor& input, IntArrayRef output_size);
};

}  // namespace anatomy::nn
