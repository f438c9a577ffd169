// Element-wise unary operators: each has a functional form, an in-place form (name_) and an
// out= form (name_out). Integer and bool inputs of the floating functions (exp, sin, sqrt, ...)
// give the default float, as in PyTorch; fp16 and bf16 compute in fp32 and round once.
#pragma once

#include <optional>
#include <string_view>

#include "anatomy/core/op_lists.h"
#include "anatomy/core/tensor.h"

namespace anatomy {

// The functions of core/op_lists.h.
#define ANATOMY_DECLARE_UNARY_FUNCTIONS(name)                 \
  Tensor name(const Tensor& self);                            \
  Tensor name##_(const Tensor& self);                         \
  Tensor name##_out(const Tensor& out, const Tensor& self);
ANATOMY_FORALL_UNARY_SAME_DTYPE_OPS(ANATOMY_DECLARE_UNARY_FUNCTIONS)
ANATOMY_FORALL_UNARY_FLOAT_OPS(ANATOMY_DECLARE_UNARY_FUNCTIONS)
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
Tensor logical_not(const Tensor& self);
Tensor logical_not_(const Tensor& self);
Tensor logical_not_out(const Tensor& out, const Tensor& self);
// Integers and bool only (~x; logical not for bool).
Tensor bitwise_not(const Tensor& self);
Tensor bitwise_not_(const Tensor& self);
Tensor bitwise_not_out(const Tensor& out, const Tensor& self);

}  // namespace anatomy
