// Element-wise unary operators: each has a functional form, an in-place form (name_) and an
// out= form (name_out). Integer and bool inputs of the floating functions (exp, sin, sqrt, ...)
// give the default float, as in PyTorch; fp16 and bf16 compute in fp32 and round once.
#pragma once

#include <optional>
#include <string_view>

#include "anatomy/core/op_lists.h"
#include "anatomy/core/tensor.h"

namespace anatomy {

// The function rows of core/op_lists.h: neg, abs, sign, floor, ceil, round, trunc, relu, exp,
// exp2, expm1, log, log1p, log2, sqrt, rsqrt, sin, cos, tan, sinh, cosh, tanh, sigmoid, silu,
// erf, reciprocal, log10, square (integers kept, bool refused), frac (floating only), asin, acos,
// atan, asinh, acosh, atanh, lgamma, digamma, erfc, erfinv, mish, hardswish and hardsigmoid
// (floating only); logical_not (a bool result from any dtype; logical_not_ writes 0 and 1 in the
// tensor's own dtype); bitwise_not (integers and bool only: ~x, logical not for bool).
#define ANATOMY_DECLARE_UNARY_FUNCTIONS(e, name, ...) \
  Tensor name(const Tensor& self);                    \
  Tensor name##_(const Tensor& self);                 \
  Tensor name##_out(const Tensor& out, const Tensor& self);
ANATOMY_FORALL_UNARY_FUNCTION_OPS(ANATOMY_DECLARE_UNARY_FUNCTIONS)
#undef ANATOMY_DECLARE_UNARY_FUNCTIONS

// gelu: approximate is "none" (x * Phi(x), through erf) or "tanh".
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor gelu_(const Tensor& self, std::string_view approximate = "none");
Tensor gelu_out(const Tensor& out, const Tensor& self, std::string_view approximate = "none");
// softplus: log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.
Tensor softplus(const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20);
Tensor softplus_out(const Tensor& out, const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20);
// NaN, +inf and -inf replaced (defaults: 0, the dtype's largest and lowest finite values).
Tensor nan_to_num(const Tensor& self, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt);
Tensor nan_to_num_(const Tensor& self, std::optional<double> nan = std::nullopt,
                   std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt);
Tensor nan_to_num_out(const Tensor& out, const Tensor& self, std::optional<double> nan = std::nullopt,
                      std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt);

// Predicates: bool results, any input dtype.
Tensor isnan(const Tensor& self);
Tensor isinf(const Tensor& self);
Tensor isfinite(const Tensor& self);
// The sign bit (true for -0.0), +inf, -inf: bool results (an out= tensor must be bool).
Tensor signbit(const Tensor& self);
Tensor signbit_out(const Tensor& out, const Tensor& self);
Tensor isposinf(const Tensor& self);
Tensor isposinf_out(const Tensor& out, const Tensor& self);
Tensor isneginf(const Tensor& self);
Tensor isneginf_out(const Tensor& out, const Tensor& self);

// polygamma(n, x): the n-th derivative of digamma (n >= 0, ValueError otherwise).
Tensor polygamma(int64_t n, const Tensor& self);
Tensor polygamma_(const Tensor& self, int64_t n);
Tensor polygamma_out(const Tensor& out, int64_t n, const Tensor& self);
// logit: log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given.
Tensor logit(const Tensor& self, std::optional<double> eps = std::nullopt);
Tensor logit_(const Tensor& self, std::optional<double> eps = std::nullopt);
Tensor logit_out(const Tensor& out, const Tensor& self, std::optional<double> eps = std::nullopt);

// Activations with arguments (floating inputs; hardtanh also keeps integer dtypes, bool refused).
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01);
Tensor leaky_relu_(const Tensor& self, const Scalar& negative_slope = 0.01);
Tensor leaky_relu_out(const Tensor& out, const Tensor& self, const Scalar& negative_slope = 0.01);
Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor hardtanh_(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor hardtanh_out(const Tensor& out, const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
// elu: scale * x for x > 0, scale * alpha * (exp(input_scale * x) - 1) otherwise.
Tensor elu(const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor elu_(const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor elu_out(const Tensor& out, const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1,
               const Scalar& input_scale = 1);
// selu: elu with alpha = 1.6732632423543772 and scale = 1.0507009873554805.
Tensor selu(const Tensor& self);
Tensor selu_(const Tensor& self);

}  // namespace anatomy
