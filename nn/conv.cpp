// nn::Conv1d, nn::Conv2d and nn::ConvTranspose2d (see conv.h) on the engine's convolutions.
#include "anatomy/nn/conv.h"

#include <algorithm>
#include <cmath>

#include "anatomy/nn/init.h"

namespace anatomy::nn {

// The arguments after their checks, one value per spatial dim.
struct ConvNd::Checked {
  int64_t in_channels, out_channels;
  std::vector<int64_t> kernel_size, stride, padding;
  std::string padding_string;
  std::vector<int64_t> dilation;
  bool transposed;
  std::vector<int64_t> output_padding;
  int64_t groups;
  bool bias;
  std::string padding_mode;
};

namespace {

using Checked = ConvNd::Checked;

void check_channels(const std::string& layer, int64_t in_channels, int64_t out_channels, int64_t groups) {
  checked_size(layer, "in_channels", in_channels);
  checked_size(layer, "out_channels", out_channels);
  ANATOMY_CHECK(groups > 0, ValueError, "{}: groups must be a positive integer, got {}", layer, groups);
  ANATOMY_CHECK(in_channels % groups == 0, ValueError, "{}: in_channels ({}) must be divisible by groups ({})", layer,
                in_channels, groups);
  ANATOMY_CHECK(out_channels % groups == 0, ValueError, "{}: out_channels ({}) must be divisible by groups ({})", layer,
                out_channels, groups);
}

// PyTorch's padding modes: "zeros" is implemented; the others are known and refused by name.
void check_padding_mode(const std::string& layer, const std::string& mode) {
  const bool known = mode == "zeros" || mode == "reflect" || mode == "replicate" || mode == "circular";
  ANATOMY_CHECK(
      known, ValueError,
      "{}: padding_mode must be one of 'zeros', 'reflect', 'replicate', 'circular', but got padding_mode='{}'", layer,
      mode);
  ANATOMY_CHECK(mode == "zeros", NotImplementedError,
                "{}: padding_mode='{}' is not implemented (only 'zeros' is; 'reflect', 'replicate' and 'circular' "
                "are not)",
                layer, mode);
}

Checked check_conv(const std::string& layer, size_t dims, int64_t in, int64_t out, const IntOrList& kernel_size,
                   const ConvArgs& a) {
  check_channels(layer, in, out, a.groups);
  Checked c{.in_channels = in,
            .out_channels = out,
            .kernel_size = expanded(layer, "kernel_size", kernel_size, dims, 1),
            .stride = expanded(layer, "stride", a.stride, dims, 1),
            .padding = {},
            .padding_string = {},
            .dilation = expanded(layer, "dilation", a.dilation, dims, 1),
            .transposed = false,
            .output_padding = std::vector<int64_t>(dims, 0),
            .groups = a.groups,
            .bias = a.bias,
            .padding_mode = a.padding_mode};
  if (const auto* mode = std::get_if<std::string>(&a.padding.value)) {
    ANATOMY_CHECK(*mode == "same" || *mode == "valid", ValueError,
                  "{}: invalid padding string '{}', should be one of 'same', 'valid'", layer, *mode);
    const bool strided = std::any_of(c.stride.begin(), c.stride.end(), [](int64_t s) { return s != 1; });
    ANATOMY_CHECK(*mode == "valid" || !strided, ValueError,
                  "{}: padding='same' is not supported for strided convolutions (stride={})", layer,
                  py_tuple(c.stride));
    c.padding_string = *mode;
  } else {
    c.padding = expanded(layer, "padding", std::get<IntOrList>(a.padding.value), dims, 0);
  }
  check_padding_mode(layer, a.padding_mode);
  return c;
}

Checked check_conv_transpose(const std::string& layer, size_t dims, int64_t in, int64_t out,
                             const IntOrList& kernel_size, const ConvTransposeArgs& a) {
  check_channels(layer, in, out, a.groups);
  ANATOMY_CHECK(a.padding_mode == "zeros", ValueError, "{}: only 'zeros' padding mode is supported, got '{}'", layer,
                a.padding_mode);
  return Checked{.in_channels = in,
                 .out_channels = out,
                 .kernel_size = expanded(layer, "kernel_size", kernel_size, dims, 1),
                 .stride = expanded(layer, "stride", a.stride, dims, 1),
                 .padding = expanded(layer, "padding", a.padding, dims, 0),
                 .padding_string = {},
                 .dilation = expanded(layer, "dilation", a.dilation, dims, 1),
                 .transposed = true,
                 .output_padding = expanded(layer, "output_padding", a.output_padding, dims, 0),
                 .groups = a.groups,
                 .bias = a.bias,
                 .padding_mode = a.padding_mode};
}

std::vector<int64_t> weight_shape(const Checked& c) {
  std::vector<int64_t> shape = c.transposed ? std::vector<int64_t>{c.in_channels, c.out_channels / c.groups}
                                            : std::vector<int64_t>{c.out_channels, c.in_channels / c.groups};
  shape.insert(shape.end(), c.kernel_size.begin(), c.kernel_size.end());
  return shape;
}

bool all_equal(const std::vector<int64_t>& values, int64_t v) {
  return std::all_of(values.begin(), values.end(), [v](int64_t x) { return x == v; });
}

}  // namespace

ConvNd::ConvNd(const std::string& type, Checked c, TensorOptions options)
    : Module(type),
      in_channels(c.in_channels),
      out_channels(c.out_channels),
      kernel_size(c.kernel_size),
      stride(c.stride),
      padding(c.padding),
      padding_string(c.padding_string),
      dilation(c.dilation),
      transposed(c.transposed),
      output_padding(c.output_padding),
      groups(c.groups),
      padding_mode(c.padding_mode),
      weight(register_parameter("weight", empty(weight_shape(c), options))),
      bias(register_parameter("bias", c.bias ? empty({c.out_channels}, options) : Tensor())) {
  reset_parameters();
}

void ConvNd::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

std::string ConvNd::extra_repr() const {
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", in_channels, out_channels, py_tuple(kernel_size),
                              py_tuple(stride));
  if (!padding_string.empty()) s += ", padding=" + padding_string;
  else if (!all_equal(padding, 0)) s += ", padding=" + py_tuple(padding);
  if (!all_equal(dilation, 1)) s += ", dilation=" + py_tuple(dilation);
  if (!all_equal(output_padding, 0)) s += ", output_padding=" + py_tuple(output_padding);
  if (groups != 1) s += fmt::format(", groups={}", groups);
  if (!bias.defined()) s += ", bias=False";
  if (padding_mode != "zeros") s += ", padding_mode=" + padding_mode;
  return s;
}

Conv1d::Conv1d(int64_t in, int64_t out, IntOrList kernel_size, const ConvArgs& args, TensorOptions options)
    : ConvNd("Conv1d", check_conv("Conv1d", 1, in, out, kernel_size, args), options) {}

Tensor Conv1d::forward(const Tensor& input) {
  if (!padding_string.empty()) return conv1d(input, weight, maybe_bias(), stride, padding_string, dilation, groups);
  return conv1d(input, weight, maybe_bias(), stride, padding, dilation, groups);
}

Conv2d::Conv2d(int64_t in, int64_t out, IntOrList kernel_size, const ConvArgs& args, TensorOptions options)
    : ConvNd("Conv2d", check_conv("Conv2d", 2, in, out, kernel_size, args), options) {}

Tensor Conv2d::forward(const Tensor& input) {
  if (!padding_string.empty()) return conv2d(input, weight, maybe_bias(), stride, padding_string, dilation, groups);
  return conv2d(input, weight, maybe_bias(), stride, padding, dilation, groups);
}

ConvTranspose2d::ConvTranspose2d(int64_t in, int64_t out, IntOrList kernel_size, const ConvTransposeArgs& args,
                                 TensorOptions options)
    : ConvNd("ConvTranspose2d", check_conv_transpose("ConvTranspose2d", 2, in, out, kernel_size, args), options) {}

Tensor ConvTranspose2d::forward(const Tensor& input) {
  return conv_transpose2d(input, weight, maybe_bias(), stride, padding, output_padding, groups, dilation);
}

Tensor ConvTranspose2d::forward(const Tensor& input, IntArrayRef output_size) {
  ANATOMY_CHECK(output_size.size() >= 2 && input.dim() >= 2, ValueError,
                "ConvTranspose2d: output_size needs the 2 spatial sizes, got {} for a {}-D input",
                shape_string(output_size), input.dim());
  std::vector<int64_t> extra(2);
  for (size_t d = 0; d < 2; ++d) {
    const int64_t in = input.size(input.dim() - 2 + static_cast<int64_t>(d));
    const int64_t want = output_size[output_size.size() - 2 + d];
    const int64_t smallest = (in - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel_size[d] - 1) + 1;
    ANATOMY_CHECK(want >= smallest && want < smallest + stride[d], ValueError,
                  "ConvTranspose2d: requested an output size of {}, but valid sizes range from {} to {} in dim {}",
                  shape_string(output_size), smallest, smallest + stride[d] - 1, d + 2);
    extra[d] = want - smallest;
  }
  return conv_transpose2d(input, weight, maybe_bias(), stride, padding, extra, groups, dilation);
}

}  // namespace anatomy::nn
