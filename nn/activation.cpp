// The activation modules and Dropout (see activation.h): argument checks and reprs.
#include "anatomy/nn/activation.h"

#include "anatomy/nn/layer_args.h"

namespace anatomy::nn {

namespace {

std::string checked_approximate(const std::string& approximate) {
  ANATOMY_CHECK(approximate == "none" || approximate == "tanh", ValueError,
                "GELU: approximate must be 'none' or 'tanh', got '{}'", approximate);
  return approximate;
}

}  // namespace

GELU::GELU(std::string approximate_) : Module("GELU"), approximate(checked_approximate(approximate_)) {}

std::string GELU::extra_repr() const { return fmt::format("approximate='{}'", approximate); }

std::string Softmax::extra_repr() const { return fmt::format("dim={}", dim); }

Dropout::Dropout(double p_) : Module("Dropout"), p(checked_probability("Dropout", p_)) {}

Tensor Dropout::forward(const Tensor& input) { return dropout(input, p, is_training()); }

std::string Dropout::extra_repr() const { return fmt::format("p={}, inplace=False", py_float(p)); }

}  // namespace anatomy::nn
