// The element-wise operator families whose members share one signature, as X-macro lists:
// the free functions (dispatch/ops/unary.h, ops_binary.h), the Tensor methods (core/tensor.h)
// and the registrations are all generated from these lists, so an op is added in one place.
#pragma once

// Unary functions that keep the dtype (integers stay integers): neg, abs, sign, floor, ceil,
// round, trunc (the rounding ones are identities on integers), relu.
// _(name)
#define ANATOMY_FORALL_UNARY_SAME_DTYPE_OPS(_) \
  _(neg)                                      \
  _(abs)                                      \
  _(sign)                                     \
  _(floor)                                    \
  _(ceil)                                     \
  _(round)                                    \
  _(trunc)                                    \
  _(relu)

// Functions that compute in floating point (integer inputs give the default float).
#define ANATOMY_FORALL_UNARY_FLOAT_OPS(_) \
  _(exp)                                  \
  _(exp2)                                 \
  _(expm1)                                \
  _(log)                                  \
  _(log1p)                                \
  _(log2)                                 \
  _(sqrt)                                 \
  _(rsqrt)                                \
  _(sin)                                  \
  _(cos)                                  \
  _(tan)                                  \
  _(tanh)                                 \
  _(sigmoid)                              \
  _(silu)                                 \
  _(erf)                                  \
  _(reciprocal)

// Binary functions, each with a Tensor and a Scalar `other`:
// remainder (Python's: the result has the divisor's sign), pow, maximum and minimum (NaN
// propagates), atan2 (floating), fmod (C's: the dividend's sign);
// comparisons giving bool; logical_* (any dtypes, bool result); bitwise_* and shifts (integers
// and bool only; a float operand raises TypeError).
// _(name)
#define ANATOMY_FORALL_BINARY_FUNCTION_OPS(_) \
  _(remainder)                                \
  _(fmod)                                     \
  _(pow)                                      \
  _(maximum)                                  \
  _(minimum)                                  \
  _(atan2)                                    \
  _(eq)                                       \
  _(ne)                                       \
  _(lt)                                       \
  _(le)                                       \
  _(gt)                                       \
  _(ge)                                       \
  _(logical_and)                              \
  _(logical_or)                               \
  _(logical_xor)                              \
  _(bitwise_and)                              \
  _(bitwise_or)                               \
  _(bitwise_xor)                              \
  _(bitwise_left_shift)                       \
  _(bitwise_right_shift)
