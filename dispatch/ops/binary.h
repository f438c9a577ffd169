// Element-wise binary and ternary operators: broadcasting, PyTorch's type promotion (0-dim
// tensors and Scalars are weak types), a functional form, an in-place form (name_, which writes
// into self and may not need a wider dtype than self's) and an out= form (name_out, whose shape
// must be the broadcast shape and whose dtype the result can be cast to). The Scalar overloads
// wrap the scalar as a 0-dim "wrapped number" tensor, as PyTorch's Python bindings do.
#pragma once

#include <optional>
#include <string_view>

#include "anatomy/core/op_lists.h"
#include "anatomy/core/tensor.h"

namespace anatomy {

// ---- arithmetic: out = self + alpha * other; sub: self - alpha * other ----
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor mul(const Tensor& self, const Tensor& other);
// True division (integers give the default float); rounding_mode "trunc" or "floor" rounds the
// quotient and keeps integer dtypes (integer division by zero raises ValueError).
Tensor div(const Tensor& self, const Tensor& other);
Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode);
Tensor add_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor mul_(const Tensor& self, const Tensor& other);
Tensor div_(const Tensor& self, const Tensor& other);
Tensor div_(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode);
Tensor add_out(const Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub_out(const Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor mul_out(const Tensor& out, const Tensor& self, const Tensor& other);
Tensor div_out(const Tensor& out, const Tensor& self, const Tensor& other);
Tensor div_out(const Tensor& out, const Tensor& self, const Tensor& other,
               std::optional<std::string_view> rounding_mode);
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor mul(const Tensor& self, const Scalar& other);
Tensor div(const Tensor& self, const Scalar& other);
Tensor add_(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor sub_(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor mul_(const Tensor& self, const Scalar& other);
Tensor div_(const Tensor& self, const Scalar& other);
Tensor div(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode);
Tensor div_(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode);
// other - alpha * self, as torch.rsub.
Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);

// ---- closeness and equality: functions over the operators above, as torch.isclose, allclose
// and equal (not registered operators of their own) ----
// |self - other| <= atol + rtol * |other| elementwise (broadcast), or equal (infinities of one
// sign included); NaNs are close to each other only with equal_nan. self and other must have one
// dtype (TypeError) and one device (DeviceError); rtol and atol must be >= 0 (ValueError).
// Integer and bool inputs compute the error in fp64, so it cannot wrap. A bool tensor.
Tensor isclose(const Tensor& self, const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
               bool equal_nan = false);
// isclose everywhere (true for empty tensors). Waits for the device, like item().
bool allclose(const Tensor& self, const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
              bool equal_nan = false);
// The same sizes and equal elements (compared after type promotion; NaN is not equal to NaN). The
// tensors must be on one device (DeviceError).
bool equal(const Tensor& self, const Tensor& other);

// Whether each element of `elements` is among `test_elements` (a bool tensor of elements' shape;
// invert negates it). The two are compared after type promotion; NaN is in no set. Sort-based
// (O((n + m) log(n + m))), a composite over sort, cumsum and scatter_add, so every backend runs
// it; assume_unique is accepted and changes nothing (the sort handles repeats either way).
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique = false, bool invert = false);
Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique = false, bool invert = false);
Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique = false, bool invert = false);

// ---- the other binary functions (core/op_lists.h says what each does), each with a Tensor and
// a Scalar `other` ----
#define ANATOMY_DECLARE_BINARY_FUNCTIONS(e, name, ...)     \
  Tensor name(const Tensor& self, const Tensor& other);    \
  Tensor name(const Tensor& self, const Scalar& other);    \
  Tensor name##_(const Tensor& self, const Tensor& other); \
  Tensor name##_(const Tensor& self, const Scalar& other); \
  Tensor name##_out(const Tensor& out, const Tensor& self, const Tensor& other);
ANATOMY_FORALL_BINARY_FUNCTION_OPS(ANATOMY_DECLARE_BINARY_FUNCTIONS)
#undef ANATOMY_DECLARE_BINARY_FUNCTIONS
// A Scalar base: pow(2, x).
Tensor pow(const Scalar& self, const Tensor& exponent);
// A Scalar self: xlogy(2, y) (PyTorch's xlogy.Scalar_Self).
Tensor xlogy(const Scalar& self, const Tensor& other);

// ---- activation gradients ----
// relu's gradient (PyTorch's ReluBackward0 calls it with the result and threshold 0): 0 where
// self <= threshold, grad_output elsewhere (a NaN self passes it), in one kernel. The two
// broadcast and promote as a binary op's; numeric dtypes (not bool); fp16 and bf16 compare in
// float; the threshold must fit that type.
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold);
// gelu's gradient (PyTorch's GeluBackward0 calls it): grad_output times the derivative of
// gelu(self, approximate) ('none': Phi(x) + x phi(x); 'tanh': the tanh form's), in one kernel,
// computed in fp32 for fp16 and bf16 and rounded once. Broadcasts and promotes as a binary op;
// floating dtypes only (TypeError otherwise); another approximate is a ValueError. Not
// differentiable (a backward of gelu's backward takes the operators' formula).
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate = "none");

// ---- ternary ----
// where(condition, self, other): self where condition is true, else other; all three broadcast,
// condition is bool.
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other);
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
Tensor where_out(const Tensor& out, const Tensor& condition, const Tensor& self, const Tensor& other);
// clamp: min(max(self, min), max); either bound may be absent (not both). NaN stays NaN.
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
Tensor clamp_(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clamp_out(const Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                 const std::optional<Scalar>& max = std::nullopt);
// addcmul: self + value * tensor1 * tensor2; addcdiv: self + value * tensor1 / tensor2 (true
// division: integer tensor1 and tensor2 are a TypeError, as in PyTorch). All three broadcast and
// promote together; an integral result needs an integral value (TypeError). Written over add, mul
// and div, so every backend runs them and autograd differentiates through them.
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor addcmul_(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor addcmul_out(const Tensor& out, const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                   const Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor addcdiv_(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor addcdiv_out(const Tensor& out, const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                   const Scalar& value = 1);
// lerp: self + weight * (end - self), floating dtypes.
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
Tensor lerp_(const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor lerp_(const Tensor& self, const Tensor& end, const Tensor& weight);
Tensor lerp_out(const Tensor& out, const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor lerp_out(const Tensor& out, const Tensor& self, const Tensor& end, const Tensor& weight);

}  // namespace anatomy
