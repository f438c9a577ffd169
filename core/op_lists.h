// The element-wise operators, one row each, as X-macro lists: the free functions
// (dispatch/ops/unary.h, dispatch/ops/binary.h), the Tensor methods (core/tensor.h), the
// schemas, the registrations and every backend's kernels are all generated from these rows, so an
// op is added in one place. The rows only name things: the rules, functors and kernels they name
// live in the operator layer and the backends.
#pragma once

// The element-wise unary operators, one row each: the one description that the enum, the
// argument rules and result dtype, the CPU loop and the CUDA kernels (dispatch/ops/unary_rows.h)
// and, for the function rows, the free functions, the Tensor methods, the schemas and the
// registrations are all generated from. Adding an operator: docs/ops.md, "Adding an element-wise
// unary operator".
//
// _(enumerator, name, kind, functor, CUDA group, functional schema, in-place schema, out= schema)
//   kind:    which dtypes the op takes and what dtype it gives (UnaryKind,
//            dispatch/ops/unary_rows.h); the plan refuses the others with a TypeError, and no
//            kernel is instantiated for them.
//   functor: the scalar rule (dispatch/ops/unary_functors.h), host-device code that the CPU loop
//            and the CUDA kernels both instantiate.
//   group:   the CUDA translation unit that instantiates its kernels
//            (backends/cuda/elementwise/unary_<group>.cu), which spreads the compile time.
//
// Function rows: each op gets name(Tensor), name_, name_out and the methods t.name(), t.name_().
// neg, abs, the rounding ops, relu and square keep the dtype and refuse bool (the rounding ops are
// identities on integers); sign keeps every dtype; the floating functions give the default float
// for integer and bool inputs, except frac, mish, hardswish and hardsigmoid, which take floating
// inputs only; logical_not gives bool; bitwise_not takes integers and bool.
#define ANATOMY_FORALL_UNARY_FUNCTION_OPS(_)                                                                          \
  _(Neg, neg, NoBool, NegFn, basic, "neg", "neg_", "neg.out")                                                         \
  _(Abs, abs, NoBool, AbsFn, basic, "abs", "abs_", "abs.out")                                                         \
  _(Sign, sign, SameDtype, SignFn, basic, "sign", "sign_", "sign.out")                                                \
  _(Floor, floor, NoBool, FloorFn, basic, "floor", "floor_", "floor.out")                                             \
  _(Ceil, ceil, NoBool, CeilFn, basic, "ceil", "ceil_", "ceil.out")                                                   \
  _(Round, round, NoBool, RoundFn, basic, "round", "round_", "round.out")                                             \
  _(Trunc, trunc, NoBool, TruncFn, basic, "trunc", "trunc_", "trunc.out")                                             \
  _(Relu, relu, NoBool, ReluFn, basic, "relu", "relu_", "relu.out")                                                   \
  _(Exp, exp, Float, ExpFn, math, "exp", "exp_", "exp.out")                                                           \
  _(Exp2, exp2, Float, Exp2Fn, math, "exp2", "exp2_", "exp2.out")                                                     \
  _(Expm1, expm1, Float, Expm1Fn, math, "expm1", "expm1_", "expm1.out")                                               \
  _(Log, log, Float, LogFn, math, "log", "log_", "log.out")                                                           \
  _(Log1p, log1p, Float, Log1pFn, math, "log1p", "log1p_", "log1p.out")                                               \
  _(Log2, log2, Float, Log2Fn, math, "log2", "log2_", "log2.out")                                                     \
  _(Sqrt, sqrt, Float, SqrtFn, math, "sqrt", "sqrt_", "sqrt.out")                                                     \
  _(Rsqrt, rsqrt, Float, RsqrtFn, math, "rsqrt", "rsqrt_", "rsqrt.out")                                               \
  _(Sin, sin, Float, SinFn, activation, "sin", "sin_", "sin.out")                                                     \
  _(Cos, cos, Float, CosFn, activation, "cos", "cos_", "cos.out")                                                     \
  _(Tan, tan, Float, TanFn, activation, "tan", "tan_", "tan.out")                                                     \
  _(Sinh, sinh, Float, SinhFn, activation, "sinh", "sinh_", "sinh.out")                                               \
  _(Cosh, cosh, Float, CoshFn, activation, "cosh", "cosh_", "cosh.out")                                               \
  _(Tanh, tanh, Float, TanhFn, activation, "tanh", "tanh_", "tanh.out")                                               \
  _(Sigmoid, sigmoid, Float, SigmoidFn, activation, "sigmoid", "sigmoid_", "sigmoid.out")                             \
  _(Silu, silu, Float, SiluFn, activation, "silu", "silu_", "silu.out")                                               \
  _(Erf, erf, Float, ErfFn, activation, "erf", "erf_", "erf.out")                                                     \
  _(Reciprocal, reciprocal, Float, ReciprocalFn, math, "reciprocal", "reciprocal_", "reciprocal.out")                 \
  _(Log10, log10, Float, Log10Fn, math, "log10", "log10_", "log10.out")                                               \
  _(Square, square, NoBool, SquareFn, basic, "square", "square_", "square.out")                                       \
  _(Frac, frac, FloatOnly, FracFn, basic, "frac", "frac_", "frac.out")                                                \
  _(Asin, asin, Float, AsinFn, math, "asin", "asin_", "asin.out")                                                     \
  _(Acos, acos, Float, AcosFn, math, "acos", "acos_", "acos.out")                                                     \
  _(Atan, atan, Float, AtanFn, math, "atan", "atan_", "atan.out")                                                     \
  _(Asinh, asinh, Float, AsinhFn, math, "asinh", "asinh_", "asinh.out")                                               \
  _(Acosh, acosh, Float, AcoshFn, math, "acosh", "acosh_", "acosh.out")                                               \
  _(Atanh, atanh, Float, AtanhFn, math, "atanh", "atanh_", "atanh.out")                                               \
  _(Lgamma, lgamma, Float, LgammaFn, math, "lgamma", "lgamma_", "lgamma.out")                                         \
  _(Digamma, digamma, Float, DigammaFn, math, "digamma", "digamma_", "digamma.out")                                   \
  _(Erfc, erfc, Float, ErfcFn, activation, "erfc", "erfc_", "erfc.out")                                               \
  _(Erfinv, erfinv, Float, ErfinvFn, activation, "erfinv", "erfinv_", "erfinv.out")                                   \
  _(Mish, mish, FloatOnly, MishFn, activation, "mish", "mish_", "mish.out")                                           \
  _(Hardswish, hardswish, FloatOnly, HardswishFn, activation, "hardswish", "hardswish_", "hardswish.out")             \
  _(Hardsigmoid, hardsigmoid, FloatOnly, HardsigmoidFn, activation, "hardsigmoid", "hardsigmoid_", "hardsigmoid.out") \
  _(LogicalNot, logical_not, Predicate, LogicalNotFn, basic, "logical_not", "logical_not_", "logical_not.out")        \
  _(BitwiseNot, bitwise_not, Bitwise, BitwiseNotFn, basic, "bitwise_not", "bitwise_not_", "bitwise_not.out")

// The rows whose front door is written by hand (gelu's approximate, softplus's beta and threshold,
// nan_to_num's replacements, polygamma's order, logit's eps, the activations' slopes, bounds and
// scales, the predicates that have no in-place form): their kernels come from the rows, their
// functions and schemas from dispatch/ops/unary.cpp. Several enumerators may share a name or a
// functor (selu is elu with fixed scales). The out= column names the out= form of a row without
// a derivative, which autograd/not_differentiable.cpp lets through.
#define ANATOMY_FORALL_UNARY_SPECIAL_OPS(_)                                   \
  _(NanToNum, nan_to_num, SameDtype, NanToNumFn, basic, "", "", "")           \
  _(Gelu, gelu, FloatOnly, GeluFn, activation, "", "", "")                    \
  _(GeluTanh, gelu, FloatOnly, GeluTanhFn, activation, "", "", "")            \
  _(Softplus, softplus, FloatOnly, SoftplusFn, activation, "", "", "")        \
  _(Isnan, isnan, Predicate, IsnanFn, basic, "", "", "")                      \
  _(Isinf, isinf, Predicate, IsinfFn, basic, "", "", "")                      \
  _(Isfinite, isfinite, Predicate, IsfiniteFn, basic, "", "", "")             \
  _(Signbit, signbit, Predicate, SignbitFn, basic, "", "", "signbit.out")     \
  _(Isposinf, isposinf, Predicate, IsposinfFn, basic, "", "", "isposinf.out") \
  _(Isneginf, isneginf, Predicate, IsneginfFn, basic, "", "", "isneginf.out") \
  _(Polygamma, polygamma, Float, PolygammaFn, math, "", "", "")               \
  _(Logit, logit, Float, LogitFn, activation, "", "", "")                     \
  _(LeakyRelu, leaky_relu, FloatOnly, LeakyReluFn, activation, "", "", "")    \
  _(Hardtanh, hardtanh, NoBool, HardtanhFn, activation, "", "", "")           \
  _(Elu, elu, FloatOnly, EluFn, activation, "", "", "")                       \
  _(Selu, selu, FloatOnly, EluFn, activation, "", "", "")

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
// maximum and minimum (NaN propagates), atan2 (floating); floor_divide (div with rounding_mode
// 'floor'); logaddexp and logaddexp2 (log(exp(a) + exp(b)) and its base-2 form, floating only);
// xlogy (a * log(b), 0 where a == 0 unless b is NaN); copysign (|a| with b's sign bit); clamp_min
// and clamp_max (one Tensor bound, maximum's and minimum's rules); max and min of two tensors
// (aten::max.other and min.other: maximum and minimum under PyTorch's other names); comparisons
// giving bool; logical_* (any dtypes, bool result); bitwise_* and shifts (integers and bool only;
// a float operand raises TypeError).
#define ANATOMY_FORALL_BINARY_FUNCTION_OPS(_)                                                                         \
  _(Remainder, remainder, NoBool, RemainderFn, math, "remainder.Tensor", "remainder_.Tensor", "remainder.Tensor_out") \
  _(Fmod, fmod, NoBool, FmodFn, math, "fmod.Tensor", "fmod_.Tensor", "fmod.Tensor_out")                               \
  _(Pow, pow, NoBool, PowFn, math, "pow.Tensor_Tensor", "pow_.Tensor", "pow.Tensor_Tensor_out")                       \
  _(Maximum, maximum, Any, MaximumFn, math, "maximum", "", "maximum.out")                                             \
  _(Minimum, minimum, Any, MinimumFn, math, "minimum", "", "minimum.out")                                             \
  _(Atan2, atan2, Float, Atan2Fn, math, "atan2", "atan2_", "atan2.out")                                               \
  _(Hypot, hypot, FloatOnly, HypotFn, math, "hypot", "hypot_", "hypot.out")                                           \
  _(FloorDivide, floor_divide, NoBool, DivFloorFn, arithmetic, "floor_divide", "floor_divide_.Tensor",                \
    "floor_divide.out")                                                                                               \
  _(Logaddexp, logaddexp, FloatOnly, LogaddexpFn, math, "logaddexp", "", "logaddexp.out")                             \
  _(Logaddexp2, logaddexp2, FloatOnly, Logaddexp2Fn, math, "logaddexp2", "", "logaddexp2.out")                        \
  _(Xlogy, xlogy, Float, XlogyFn, math, "xlogy.Tensor", "xlogy_.Tensor", "xlogy.OutTensor")                           \
  _(Copysign, copysign, Float, CopysignFn, math, "copysign.Tensor", "copysign_.Tensor", "copysign.out")               \
  _(ClampMinTensor, clamp_min, NoBool, MaximumFn, math, "clamp_min.Tensor", "clamp_min_.Tensor",                      \
    "clamp_min.Tensor_out")                                                                                           \
  _(ClampMaxTensor, clamp_max, NoBool, MinimumFn, math, "clamp_max.Tensor", "clamp_max_.Tensor",                      \
    "clamp_max.Tensor_out")                                                                                           \
  _(MaxOther, max, Any, MaximumFn, math, "max.other", "", "max.out")                                                  \
  _(MinOther, min, Any, MinimumFn, math, "min.other", "", "min.out")                                                  \
  _(Eq, eq, Compare, EqFn, compare, "eq.Tensor", "eq_.Tensor", "eq.Tensor_out")                                       \
  _(Ne, ne, Compare, NeFn, compare, "ne.Tensor", "ne_.Tensor", "ne.Tensor_out")                                       \
  _(Lt, lt, Compare, LtFn, compare, "lt.Tensor", "lt_.Tensor", "lt.Tensor_out")                                       \
  _(Le, le, Compare, LeFn, compare, "le.Tensor", "le_.Tensor", "le.Tensor_out")                                       \
  _(Gt, gt, Compare, GtFn, compare, "gt.Tensor", "gt_.Tensor", "gt.Tensor_out")                                       \
  _(Ge, ge, Compare, GeFn, compare, "ge.Tensor", "ge_.Tensor", "ge.Tensor_out")                                       \
  _(LogicalAnd, logical_and, Compare, LogicalAndFn, compare, "logical_and", "logical_and_", "logical_and.out")        \
  _(LogicalOr, logical_or, Compare, LogicalOrFn, compare, "logical_or", "logical_or_", "logical_or.out")              \
  _(LogicalXor, logical_xor, Compare, LogicalXorFn, compare, "logical_xor", "logical_xor_", "logical_xor.out")        \
  _(BitwiseAnd, bitwise_and, Bitwise, BitwiseAndFn, bitwise, "bitwise_and.Tensor", "bitwise_and_.Tensor",             \
    "bitwise_and.Tensor_out")                                                                                         \
  _(BitwiseOr, bitwise_or, Bitwise, BitwiseOrFn, bitwise, "bitwise_or.Tensor", "bitwise_or_.Tensor",                  \
    "bitwise_or.Tensor_out")                                                                                          \
  _(BitwiseXor, bitwise_xor, Bitwise, BitwiseXorFn, bitwise, "bitwise_xor.Tensor", "bitwise_xor_.Tensor",             \
    "bitwise_xor.Tensor_out")                                                                                         \
  _(LeftShift, bitwise_left_shift, Shift, LeftShiftFn, bitwise, "bitwise_left_shift.Tensor",                          \
    "bitwise_left_shift_.Tensor", "bitwise_left_shift.Tensor_out")                                                    \
  _(RightShift, bitwise_right_shift, Shift, RightShiftFn, bitwise, "bitwise_right_shift.Tensor",                      \
    "bitwise_right_shift_.Tensor", "bitwise_right_shift.Tensor_out")

// The rows whose front door is written by hand (add and sub's alpha, div's rounding modes, clamp's
// optional bounds, threshold_backward's threshold, gelu_backward's approximation): their kernels
// come from the rows, their functions and schemas from dispatch/ops/binary.cpp. Several
// enumerators may share a name.
#define ANATOMY_FORALL_BINARY_SPECIAL_OPS(_)                                              \
  _(Add, add, Any, AddFn, arithmetic, "", "", "")                                         \
  _(Sub, sub, NoBool, SubFn, arithmetic, "", "", "")                                      \
  _(Mul, mul, Any, MulFn, arithmetic, "", "", "")                                         \
  _(Div, div, Float, DivFn, arithmetic, "", "", "")                                       \
  _(DivTrunc, div, NoBool, DivTruncFn, arithmetic, "", "", "")                            \
  _(DivFloor, div, NoBool, DivFloorFn, arithmetic, "", "", "")                            \
  _(ClampMin, clamp, NoBool, MaximumFn, math, "", "", "")                                 \
  _(ClampMax, clamp, NoBool, MinimumFn, math, "", "", "")                                 \
  _(ThresholdBackward, threshold_backward, NoBool, ThresholdBackwardFn, math, "", "", "") \
  _(GeluBackward, gelu_backward, FloatOnly, GeluBackwardFn, math, "", "", "")             \
  _(GeluBackwardTanh, gelu_backward, FloatOnly, GeluBackwardTanhFn, math, "", "", "")

// The element-wise ternary operators, one row each; their front doors are written by hand
// (dispatch/ops/binary.cpp: where's condition, lerp's Scalar weight, clamp's optional bounds),
// their kernels come from the rows (dispatch/ops/binary_rows.h).
// _(enumerator, name, dtypes, functor): dtypes as in the binary rows (the common dtype of the
// three inputs; where's bool condition is cast to it), functor in dispatch/ops/ternary_functors.h.
#define ANATOMY_FORALL_TERNARY_OPS(_) \
  _(Where, where, Any, WhereFn)       \
  _(Lerp, lerp, FloatOnly, LerpFn)    \
  _(Clamp, clamp, NoBool, ClampFn)
