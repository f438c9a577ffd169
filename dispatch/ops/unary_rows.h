// What the element-wise unary rows (core/op_lists.h: one row per operator) turn into in the
// operator layer: the enum, the kind column's meaning, the CUDA groups. The argument rules
// (dispatch/ops/unary_rules.cpp), the CPU loop (backends/cpu/unary_cpu.cpp) and the CUDA kernels
// (backends/cuda/elementwise/unary_*.cu) are generated from the same rows. Includes nothing that
// needs fmt, so CUDA translation units take it as it is.
#pragma once

#include <cstdint>

#include "anatomy/core/op_lists.h"
#include "anatomy/dispatch/ops/binary_rows.h"

namespace anatomy {

// Every row: the function rows and the special ones.
#define ANATOMY_FORALL_UNARY_OPS(_) ANATOMY_FORALL_UNARY_SPECIAL_OPS(_) ANATOMY_FORALL_UNARY_FUNCTION_OPS(_)

enum class UnaryOp : int8_t {
#define ANATOMY_UNARY_ENUM(e, ...) e,
  ANATOMY_FORALL_UNARY_OPS(ANATOMY_UNARY_ENUM)
#undef ANATOMY_UNARY_ENUM
};

// The kind column: which input dtypes an op takes and how its result dtype follows from the
// input's.
enum class UnaryKind : int8_t {
  SameDtype,  // every dtype, kept (sign, nan_to_num; both leave bool and integers as they are)
  NoBool,     // the dtype kept, bool refused with a TypeError (neg, abs, the rounding ops, relu)
  Float,      // integer and bool inputs compute in the default float (exp, sin, reciprocal, ...)
  FloatOnly,  // floating inputs only, TypeError otherwise (gelu, softplus, as in PyTorch)
  Predicate,  // a bool result from any input, computed in the input's dtype (isnan, logical_not)
  Bitwise,    // integers and bool, kept; floating inputs are a TypeError (bitwise_not)
};

// Whether the ops of `kind` have a derivative (predicates give bools, bitwise ops integers).
constexpr bool unary_kind_differentiable(UnaryKind k) { return k != UnaryKind::Predicate && k != UnaryKind::Bitwise; }

// The CUDA group column.
enum class UnaryGroup : int8_t { basic, math, activation };

// The dtypes the kernels of `kind` compute in, told as a binary row's dtypes class: the plan's
// common dtype, so Float's integer inputs reach the kernel promoted.
constexpr BinaryDtypes unary_kind_dtypes(UnaryKind k) {
  switch (k) {
    case UnaryKind::NoBool:
      return BinaryDtypes::NoBool;
    case UnaryKind::Float:
    case UnaryKind::FloatOnly:
      return BinaryDtypes::FloatOnly;
    case UnaryKind::Bitwise:
      return BinaryDtypes::Bitwise;
    case UnaryKind::SameDtype:
    case UnaryKind::Predicate:
      return BinaryDtypes::Any;
  }
  return BinaryDtypes::Any;
}

// Whether an op of `kind` computes in T (the kernels are instantiated for these only).
template <UnaryKind K, typename T>
inline constexpr bool unary_takes_v = binary_takes_v<unary_kind_dtypes(K), T>;

// The non-tensor arguments of the few ops that take any, as doubles exact in the type the op
// computes in: softplus's beta (a) and threshold (b); nan_to_num's replacements (a = nan,
// b = posinf, c = neginf), already rounded to the tensor's dtype so that the kernel's final
// rounding keeps them exact. Zero for the other ops.
struct UnaryScalars {
  double a = 0, b = 0, c = 0;
};

}  // namespace anatomy
