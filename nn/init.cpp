// nn::init (see init.h): the formulas of torch.nn.init, each a no-grad fill of the tensor itself.
#include "anatomy/nn/init.h"

#include <cmath>

namespace anatomy::nn::init {

namespace {

void check_tensor(const Tensor& tensor, const char* op) {
  ANATOMY_CHECK(tensor.defined(), ValueError, "nn::init::{}: the tensor is undefined", op);
}

int64_t fan_for_mode(const Tensor& tensor, std::string_view mode) {
  ANATOMY_CHECK(mode == "fan_in" || mode == "fan_out", ValueError,
                "nn::init: mode '{}' is not supported, use 'fan_in' or 'fan_out'", mode);
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return mode == "fan_in" ? fan_in : fan_out;
}

double kaiming_std(const Tensor& tensor, double a, std::string_view mode, std::string_view nonlinearity,
                   const char* op) {
  check_tensor(tensor, op);
  const int64_t fan = fan_for_mode(tensor, mode);
  ANATOMY_CHECK(fan > 0, ValueError, "nn::init::{}: the fan of a tensor of shape {} is 0", op,
                shape_string(tensor.sizes()));
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}

double xavier_std(const Tensor& tensor, double gain, const char* op) {
  check_tensor(tensor, op);
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  ANATOMY_CHECK(fan_in + fan_out > 0, ValueError, "nn::init::{}: the fans of a tensor of shape {} are 0", op,
                shape_string(tensor.sizes()));
  return gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
}

// A tensor without elements has nothing to fill (PyTorch warns and returns it).
bool empty_fill(const Tensor& tensor, const char* op) {
  check_tensor(tensor, op);
  return tensor.numel() == 0;
}

}  // namespace

double calculate_gain(std::string_view nonlinearity, std::optional<double> param) {
  if (nonlinearity == "linear" || nonlinearity == "conv1d" || nonlinearity == "conv2d" || nonlinearity == "conv3d" ||
      nonlinearity == "conv_transpose1d" || nonlinearity == "conv_transpose2d" || nonlinearity == "conv_transpose3d" ||
      nonlinearity == "sigmoid") {
    return 1.0;
  }
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4.0;
  ANATOMY_THROW(ValueError, "nn::init::calculate_gain: unsupported nonlinearity '{}'", nonlinearity);
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  check_tensor(tensor, "calculate_fan_in_and_fan_out");
  ANATOMY_CHECK(tensor.dim() >= 2, ValueError,
                "nn::init: fan in and fan out can not be computed for a tensor with fewer than 2 dimensions "
                "(shape {})",
                shape_string(tensor.sizes()));
  int64_t receptive_field = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

const Tensor& uniform_(const Tensor& tensor, double a, double b) {
  check_tensor(tensor, "uniform_");
  autograd::NoGradGuard no_grad;
  return tensor.uniform_(a, b);
}

const Tensor& normal_(const Tensor& tensor, double mean, double std) {
  check_tensor(tensor, "normal_");
  autograd::NoGradGuard no_grad;
  return tensor.normal_(mean, std);
}

const Tensor& constant_(const Tensor& tensor, const Scalar& value) {
  check_tensor(tensor, "constant_");
  autograd::NoGradGuard no_grad;
  return tensor.fill_(value);
}

const Tensor& zeros_(const Tensor& tensor) { return constant_(tensor, 0); }
const Tensor& ones_(const Tensor& tensor) { return constant_(tensor, 1); }

const Tensor& xavier_uniform_(const Tensor& tensor, double gain) {
  if (empty_fill(tensor, "xavier_uniform_")) return tensor;
  const double bound = std::sqrt(3.0) * xavier_std(tensor, gain, "xavier_uniform_");
  return init::uniform_(tensor, -bound, bound);
}

const Tensor& xavier_normal_(const Tensor& tensor, double gain) {
  if (empty_fill(tensor, "xavier_normal_")) return tensor;
  return init::normal_(tensor, 0.0, xavier_std(tensor, gain, "xavier_normal_"));
}

const Tensor& kaiming_uniform_(const Tensor& tensor, double a, std::string_view mode, std::string_view nonlinearity) {
  if (empty_fill(tensor, "kaiming_uniform_")) return tensor;
  const double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_");
  return init::uniform_(tensor, -bound, bound);
}

const Tensor& kaiming_normal_(const Tensor& tensor, double a, std::string_view mode, std::string_view nonlinearity) {
  if (empty_fill(tensor, "kaiming_normal_")) return tensor;
  return init::normal_(tensor, 0.0, kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_"));
}

const Tensor& trunc_normal_(const Tensor& tensor, double mean, double std, double a, double b) {
  check_tensor(tensor, "trunc_normal_");
  ANATOMY_CHECK(a < b, ValueError, "nn::init::trunc_normal_: the bounds a = {} and b = {} need a < b", a, b);
  ANATOMY_CHECK(std > 0, ValueError, "nn::init::trunc_normal_: std {} must be positive", std);
  ANATOMY_CHECK(tensor.is_floating_point(), TypeError, "nn::init::trunc_normal_: a floating tensor is needed, not {}",
                name(tensor.dtype()));
  auto norm_cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double l = norm_cdf((a - mean) / std);
  const double u = norm_cdf((b - mean) / std);
  autograd::NoGradGuard no_grad;
  // Uniform in [2l - 1, 2u - 1], then the inverse of the standard normal's CDF through erfinv.
  tensor.uniform_(2 * l - 1, 2 * u - 1);
  tensor.erfinv_();
  tensor.mul_(std * std::sqrt(2.0));
  tensor.add_(mean);
  return tensor.clamp_(a, b);
}

}  // namespace anatomy::nn::init
