// The element-wise binary operators, one row each: the one description every part of the engine
// is generated from (the enum, the names, the argument rules of dispatch/ops/binary_rules.cpp,
// the CPU loops of backends/cpu/binary_cpu.cpp and the CUDA kernels of
// backends/cuda/elementwise/binary*.cu). Includes nothing that needs fmt, so CUDA translation
// units take it as it is.
//
// _(enumerator, operator name, dtypes, functor, CUDA group)
//   dtypes:  which dtypes the op computes in (BinaryDtypes below); the plan refuses the others
//            with a TypeError, and no kernel is instantiated for them.
//   functor: the scalar rule (dispatch/ops/binary_functors.h), host-device code.
//   group:   the CUDA translation unit that instantiates the kernels (binary_<group>.cu), which
//            spreads the compile time.
// Several enumerators may share a name: the rounding modes of div, the one-sided forms of clamp.
// Adding an operator: docs/ops.md, "Adding an element-wise binary operator".
#pragma once

#include <cstdint>
#include <type_traits>

namespace anatomy {

#define ANATOMY_FORALL_BINARY_OPS(_)                                         \
  _(Add, "add", Any, AddFn, arithmetic)                                      \
  _(Sub, "sub", NoBool, SubFn, arithmetic)                                   \
  _(Mul, "mul", Any, MulFn, arithmetic)                                      \
  _(Div, "div", Float, DivFn, arithmetic)                                    \
  _(DivTrunc, "div", NoBool, DivTruncFn, arithmetic)                         \
  _(DivFloor, "div", NoBool, DivFloorFn, arithmetic)                         \
  _(Remainder, "remainder", NoBool, RemainderFn, math)                       \
  _(Fmod, "fmod", NoBool, FmodFn, math)                                      \
  _(Pow, "pow", NoBool, PowFn, math)                                         \
  _(Maximum, "maximum", Any, MaximumFn, math)                                \
  _(Minimum, "minimum", Any, MinimumFn, math)                                \
  _(ClampMin, "clamp", NoBool, MaximumFn, math)                              \
  _(ClampMax, "clamp", NoBool, MinimumFn, math)                              \
  _(Atan2, "atan2", Float, Atan2Fn, math)                                    \
  _(Eq, "eq", Compare, EqFn, compare)                                        \
  _(Ne, "ne", Compare, NeFn, compare)                                        \
  _(Lt, "lt", Compare, LtFn, compare)                                        \
  _(Le, "le", Compare, LeFn, compare)                                        \
  _(Gt, "gt", Compare, GtFn, compare)                                        \
  _(Ge, "ge", Compare, GeFn, compare)                                        \
  _(LogicalAnd, "logical_and", Compare, LogicalAndFn, compare)               \
  _(LogicalOr, "logical_or", Compare, LogicalOrFn, compare)                  \
  _(LogicalXor, "logical_xor", Compare, LogicalXorFn, compare)               \
  _(BitwiseAnd, "bitwise_and", Bitwise, BitwiseAndFn, bitwise)               \
  _(BitwiseOr, "bitwise_or", Bitwise, BitwiseOrFn, bitwise)                  \
  _(BitwiseXor, "bitwise_xor", Bitwise, BitwiseXorFn, bitwise)               \
  _(LeftShift, "bitwise_left_shift", Shift, LeftShiftFn, bitwise)            \
  _(RightShift, "bitwise_right_shift", Shift, RightShiftFn, bitwise)            \
  _(ThresholdBackward, "threshold_backward", NoBool, ThresholdBackwardFn, math)

enum class BinaryOp : int8_t {
#define ANATOMY_BINARY_ENUM(e, name, dtypes, fn, group) e,
  ANATOMY_FORALL_BINARY_OPS(ANATOMY_BINARY_ENUM)
#undef ANATOMY_BINARY_ENUM
};

// The dtypes column. Numbers are computed in the inputs' common dtype (PyTorch's promotion).
enum class BinaryDtypes : int8_t {
  Any,      // every dtype, bool included (add and maximum are or on bool, mul and minimum and)
  NoBool,   // every dtype but bool (TypeError: the op has no meaning on bool)
  Float,    // integer and bool inputs promote to the default float (true division, atan2)
  Compare,  // every dtype, a bool result (comparisons, logical ops)
  Bitwise,  // integers and bool; floating operands are a TypeError
  Shift,    // integers only
};

// The CUDA group column.
enum class BinaryGroup : int8_t { arithmetic, math, compare, bitwise };

// Whether an op of `dtypes` computes in T (the kernels are instantiated for these only).
template <BinaryDtypes D, typename T>
inline constexpr bool binary_takes_v = [] {
  constexpr bool is_bool = std::is_same_v<T, bool>;
  constexpr bool is_integer = std::is_integral_v<T> && !is_bool;
  switch (D) {
    case BinaryDtypes::Any:
    case BinaryDtypes::Compare: return true;
    case BinaryDtypes::NoBool: return !is_bool;
    case BinaryDtypes::Float: return !std::is_integral_v<T>;
    case BinaryDtypes::Bitwise: return std::is_integral_v<T>;
    case BinaryDtypes::Shift: return is_integer;
  }
  return false;
}();

}  // namespace anatomy
