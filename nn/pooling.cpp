// nn::MaxPool2d, nn::AvgPool2d and nn::AdaptiveAvgPool2d (see pooling.h) on the engine's pooling
// operators: the arguments are checked when the layer is made, so a bad one fails there.
#include "anatomy/nn/pooling.h"

namespace anatomy::nn {

namespace {

// The argument checked for two spatial dims; the layer keeps it as given for its repr.
const IntOrList& checked(std::string_view layer, std::string_view arg, const IntOrList& value, int64_t min) {
  expanded(layer, arg, value, 2, min);
  return value;
}

// An empty stride is the kernel's (PyTorch's stride=None).
const IntOrList& stride_or_kernel(const IntOrList& stride, const IntOrList& kernel) {
  return stride.values.empty() ? kernel : stride;
}

}  // namespace

MaxPool2d::MaxPool2d(IntOrList kernel, const MaxPoolArgs& args)
    : Module("MaxPool2d"),
      kernel_size(checked("MaxPool2d", "kernel_size", kernel, 1)),
      stride(checked("MaxPool2d", "stride", stride_or_kernel(args.stride, kernel), 1)),
      padding(checked("MaxPool2d", "padding", args.padding, 0)),
      dilation(checked("MaxPool2d", "dilation", args.dilation, 1)),
      ceil_mode(args.ceil_mode) {}

Tensor MaxPool2d::forward(const Tensor& input) {
  return max_pool2d(input, kernel_size.values, stride.values, padding.values, dilation.values, ceil_mode);
}

std::tuple<Tensor, Tensor> MaxPool2d::forward_with_indices(const Tensor& input) {
  return max_pool2d_with_indices(input, kernel_size.values, stride.values, padding.values, dilation.values, ceil_mode);
}

std::string MaxPool2d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}", kernel_size.repr(),
                     stride.repr(), padding.repr(), dilation.repr(), py_bool(ceil_mode));
}

namespace {

std::optional<int64_t> checked_divisor(std::optional<int64_t> divisor) {
  ANATOMY_CHECK(!divisor || *divisor != 0, ValueError, "AvgPool2d: divisor_override must not be zero");
  return divisor;
}

}  // namespace

AvgPool2d::AvgPool2d(IntOrList kernel, const AvgPoolArgs& args)
    : Module("AvgPool2d"),
      kernel_size(checked("AvgPool2d", "kernel_size", kernel, 1)),
      stride(checked("AvgPool2d", "stride", stride_or_kernel(args.stride, kernel), 1)),
      padding(checked("AvgPool2d", "padding", args.padding, 0)),
      ceil_mode(args.ceil_mode),
      count_include_pad(args.count_include_pad),
      divisor_override(checked_divisor(args.divisor_override)) {}

Tensor AvgPool2d::forward(const Tensor& input) {
  return avg_pool2d(input, kernel_size.values, stride.values, padding.values, ceil_mode, count_include_pad,
                    divisor_override);
}

std::string AvgPool2d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}", kernel_size.repr(), stride.repr(), padding.repr());
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(IntOrList size)
    : Module("AdaptiveAvgPool2d"), output_size(checked("AdaptiveAvgPool2d", "output_size", size, 0)) {}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) {
  return adaptive_avg_pool2d(input, expanded("AdaptiveAvgPool2d", "output_size", output_size, 2, 0));
}

std::string AdaptiveAvgPool2d::extra_repr() const { return "output_size=" + output_size.repr(); }

}  // namespace anatomy::nn
