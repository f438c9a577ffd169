// What the element-wise binary and ternary rows (core/op_lists.h: one row per operator) turn into
// in the operator layer: the enums, the dtypes column's meaning, the CUDA groups. The argument rules
// (dispatch/ops/binary.cpp), the CPU loops (backends/cpu/binary_cpu.cpp) and the CUDA
// kernels (backends/cuda/elementwise/binary_*.cu) are generated from the same rows. Includes
// nothing that needs fmt, so CUDA translation units take it as it is.
#pragma once

#include <cstdint>
#include <type_traits>

#include "anatomy/core/op_lists.h"

namespace anatomy {

// Every row: the function rows and the special ones.
#define ANATOMY_FORALL_BINARY_OPS(_) ANATOMY_FORALL_BINARY_SPECIAL_OPS(_) ANATOMY_FORALL_BINARY_FUNCTION_OPS(_)

enum class BinaryOp : int8_t {
#define ANATOMY_BINARY_ENUM(e, ...) e,
  ANATOMY_FORALL_BINARY_OPS(ANATOMY_BINARY_ENUM)
#undef ANATOMY_BINARY_ENUM
};

// The dtypes column. Numbers are computed in the inputs' common dtype (PyTorch's promotion).
enum class BinaryDtypes : int8_t {
  Any,        // every dtype, bool included (add and maximum are or on bool, mul and minimum and)
  NoBool,     // every dtype but bool (TypeError: the op has no meaning on bool)
  Float,      // integer and bool inputs promote to the default float (true division, atan2)
  FloatOnly,  // floating dtypes only; integer and bool inputs are a TypeError (hypot, as in PyTorch)
  Compare,    // every dtype, a bool result (comparisons, logical ops)
  Bitwise,    // integers and bool; floating operands are a TypeError
  Shift,      // integers only
};

// Whether the ops of `dtypes` have a derivative (comparisons, logical and bitwise ops and shifts
// give bools or integers).
constexpr bool binary_dtypes_differentiable(BinaryDtypes d) {
  return d != BinaryDtypes::Compare && d != BinaryDtypes::Bitwise && d != BinaryDtypes::Shift;
}

// The CUDA group column.
enum class BinaryGroup : int8_t { arithmetic, math, compare, bitwise };

// Whether an op of `dtypes` computes in T (the kernels are instantiated for these only).
template <BinaryDtypes D, typename T>
inline constexpr bool binary_takes_v = [] {
  constexpr bool is_bool = std::is_same_v<T, bool>;
  constexpr bool is_integer = std::is_integral_v<T> && !is_bool;
  switch (D) {
    case BinaryDtypes::Any:
    case BinaryDtypes::Compare:
      return true;
    case BinaryDtypes::NoBool:
      return !is_bool;
    case BinaryDtypes::Float:
    case BinaryDtypes::FloatOnly:
      return !std::is_integral_v<T>;
    case BinaryDtypes::Bitwise:
      return std::is_integral_v<T>;
    case BinaryDtypes::Shift:
      return is_integer;
  }
  return false;
}();

// where(condition, a, b); lerp(a, end b, weight c); clamp(a, min b, max c). Their dtypes column
// is read as the binary one's, for the plan's common dtype.
enum class TernaryOp : int8_t {
#define ANATOMY_TERNARY_ENUM(e, ...) e,
  ANATOMY_FORALL_TERNARY_OPS(ANATOMY_TERNARY_ENUM)
#undef ANATOMY_TERNARY_ENUM
};

}  // namespace anatomy
