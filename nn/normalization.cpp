// nn::LayerNorm and nn::RMSNorm (see normalization.h) on the engine's layer_norm and rms_norm.
#include "anatomy/nn/normalization.h"

#include "anatomy/nn/init.h"
#include "anatomy/nn/layer_args.h"

namespace anatomy::nn {

namespace {

std::vector<int64_t> checked_shape(std::string_view layer, std::vector<int64_t> shape) {
  for (int64_t s : shape) checked_size(layer, "normalized_shape", s);
  return shape;
}

std::optional<Tensor> maybe(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

}  // namespace

LayerNorm::LayerNorm(std::vector<int64_t> shape, double eps_, bool affine, bool with_bias, TensorOptions options)
    : Module("LayerNorm"),
      normalized_shape(checked_shape("LayerNorm", std::move(shape))),
      eps(eps_),
      elementwise_affine(affine),
      weight(register_parameter("weight", affine ? empty(normalized_shape, options) : Tensor())),
      bias(register_parameter("bias", affine && with_bias ? empty(normalized_shape, options) : Tensor())) {
  reset_parameters();
}

void LayerNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNorm::forward(const Tensor& input) {
  return layer_norm(input, normalized_shape, maybe(weight), maybe(bias), eps);
}

std::string LayerNorm::extra_repr() const {
  return fmt::format("{}, eps={}, elementwise_affine={}", shape_string(normalized_shape), py_float(eps),
                     py_bool(elementwise_affine));
}

RMSNorm::RMSNorm(std::vector<int64_t> shape, std::optional<double> eps_, bool affine, TensorOptions options)
    : Module("RMSNorm"),
      normalized_shape(checked_shape("RMSNorm", std::move(shape))),
      eps(eps_),
      elementwise_affine(affine),
      weight(register_parameter("weight", affine ? empty(normalized_shape, options) : Tensor())) {
  reset_parameters();
}

void RMSNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
}

Tensor RMSNorm::forward(const Tensor& input) { return rms_norm(input, normalized_shape, maybe(weight), eps); }

std::string RMSNorm::extra_repr() const {
  return fmt::format("{}, eps={}, elementwise_affine={}", shape_string(normalized_shape),
                     eps ? py_float(*eps) : std::string("None"), py_bool(elementwise_affine));
}

}  // namespace anatomy::nn
