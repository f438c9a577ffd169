// The element-wise operator families whose members share one signature, as X-macro lists:
// the free functions (dispatch/ops/unary.h, dispatch/ops/binary.h), the Tensor methods
// (core/tensor.h) and the registrations are all generated from these lists, so an op is added in
// one place. They are lists of names only: the rules, functors and kernels they name live in
// the operator layer and the backends.
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

// The element-wise binary operators, one row each: the one description that the enum, the
// argument rules, the CPU loops and the CUDA kernels (dispatch/ops/binary_rows.h) and, for the
// function rows, the free functions, the Tensor methods, the schemas and the registrations are
// all generated from. Adding an operator: docs/ops.md, "Adding an element-wise binary operator".
//
// _(enumerator, name, dtypes, functor, CUDA group, functional schema, in-place schema, out= schema)
//   dtypes:  which dtypes the op computes in (BinaryDtypes, dispatch/ops/binary_rows.h); the plan
//            refuses the others with a TypeError, and no kernel is instantiated for them.
//   functor: the scalar rule (dispatch/ops/binary_functors.h), host-device code that the CPU
//            loops and the CUDA kernels both instantiate.
//   group:   the CUDA translation unit that instantiates its kernels
//            (backends/cuda/elementwise/binary_<group>.cu), which spreads the compile time.
//   schemas: PyTorch's overload names. An empty in-place schema means PyTorch has no in-place
//            form: name_ runs the out= form with out = self.
//
// Function rows: each op gets name(Tensor, Tensor | Scalar), name_, name_out and the methods.
// remainder (Python's: the result has the divisor's sign), fmod (C's: the dividend's sign), pow,
// maximum and minimum (NaN propagates), atan2 (floating); comparisons giving bool; logical_* (any
// dtypes, bool result); bitwise_* and shifts (integers and bool only; a float operand raises
// TypeError).
#define ANATOMY_FORALL_BINARY_FUNCTION_OPS(_)                                                                       \
  _(Remainder, remainder, NoBool, RemainderFn, math, "remainder.Tensor", "remainder_.Tensor", "remainder.Tensor_out") \
  _(Fmod, fmod, NoBool, FmodFn, math, "fmod.Tensor", "fmod_.Tensor", "fmod.Tensor_out")                             \
  _(Pow, pow, NoBool, PowFn, math, "pow.Tensor_Tensor", "pow_.Tensor", "pow.Tensor_Tensor_out")                     \
  _(Maximum, maximum, Any, MaximumFn, math, "maximum", "", "maximum.out")                                           \
  _(Minimum, minimum, Any, MinimumFn, math, "minimum", "", "minimum.out")                                           \
  _(Atan2, atan2, Float, Atan2Fn, math, "atan2", "atan2_", "atan2.out")                                             \
  _(Hypot, hypot, FloatOnly, HypotFn, math, "hypot", "hypot_", "hypot.out")                                         \
  _(Eq, eq, Compare, EqFn, compare, "eq.Tensor", "eq_.Tensor", "eq.Tensor_out")                                     \
  _(Ne, ne, Compare, NeFn, compare, "ne.Tensor", "ne_.Tensor", "ne.Tensor_out")                                     \
  _(Lt, lt, Compare, LtFn, compare, "lt.Tensor", "lt_.Tensor", "lt.Tensor_out")                                     \
  _(Le, le, Compare, LeFn, compare, "le.Tensor", "le_.Tensor", "le.Tensor_out")                                     \
  _(Gt, gt, Compare, GtFn, compare, "gt.Tensor", "gt_.Tensor", "gt.Tensor_out")                                     \
  _(Ge, ge, Compare, GeFn, compare, "ge.Tensor", "ge_.Tensor", "ge.Tensor_out")                                     \
  _(LogicalAnd, logical_and, Compare, LogicalAndFn, compare, "logical_and", "logical_and_", "logical_and.out")     \
  _(LogicalOr, logical_or, Compare, LogicalOrFn, compare, "logical_or", "logical_or_", "logical_or.out")           \
  _(LogicalXor, logical_xor, Compare, LogicalXorFn, compare, "logical_xor", "logical_xor_", "logical_xor.out")     \
  _(BitwiseAnd, bitwise_and, Bitwise, BitwiseAndFn, bitwise, "bitwise_and.Tensor", "bitwise_and_.Tensor",           \
    "bitwise_and.Tensor_out")                                                                                       \
  _(BitwiseOr, bitwise_or, Bitwise, BitwiseOrFn, bitwise, "bitwise_or.Tensor", "bitwise_or_.Tensor",                \
    "bitwise_or.Tensor_out")                                                                                        \
  _(BitwiseXor, bitwise_xor, Bitwise, BitwiseXorFn, bitwise, "bitwise_xor.Tensor", "bitwise_xor_.Tensor",           \
    "bitwise_xor.Tensor_out")                                                                                       \
  _(LeftShift, bitwise_left_shift, Shift, LeftShiftFn, bitwise, "bitwise_left_shift.Tensor",                        \
    "bitwise_left_shift_.Tensor", "bitwise_left_shift.Tensor_out")                                                  \
  _(RightShift, bitwise_right_shift, Shift, RightShiftFn, bitwise, "bitwise_right_shift.Tensor",                    \
    "bitwise_right_shift_.Tensor", "bitwise_right_shift.Tensor_out")

// The rows whose front door is written by hand (add and sub's alpha, div's rounding modes, clamp's
// optional bounds, threshold_backward's threshold): their kernels come from the rows, their
// functions and schemas from dispatch/ops/binary.cpp. Several enumerators may share a name.
#define ANATOMY_FORALL_BINARY_SPECIAL_OPS(_)                                      \
  _(Add, add, Any, AddFn, arithmetic, "", "", "")                                 \
  _(Sub, sub, NoBool, SubFn, arithmetic, "", "", "")                              \
  _(Mul, mul, Any, MulFn, arithmetic, "", "", "")                                 \
  _(Div, div, Float, DivFn, arithmetic, "", "", "")                               \
  _(DivTrunc, div, NoBool, DivTruncFn, arithmetic, "", "", "")                    \
  _(DivFloor, div, NoBool, DivFloorFn, arithmetic, "", "", "")                    \
  _(ClampMin, clamp, NoBool, MaximumFn, math, "", "", "")                         \
  _(ClampMax, clamp, NoBool, MinimumFn, math, "", "", "")                         \
  _(ThresholdBackward, threshold_backward, NoBool, ThresholdBackwardFn, math, "", "", "")
