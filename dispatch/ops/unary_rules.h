// The element-wise unary operators' shared front half: which dtypes each takes, what dtype it
// gives, and its iteration plan (one output, one input), used by every backend's kernels.
#pragma once

#include <optional>

#include "anatomy/core/iteration_plan.h"

namespace anatomy {

// How an operator's result dtype follows from its input's.
enum class UnaryKind : int8_t {
  SameDtype,  // integers stay integers (neg, abs, floor, relu, nan_to_num, bitwise_not, ...)
  Float,      // integer and bool inputs compute in the default float (exp, sin, reciprocal, ...)
  FloatOnly,  // floating inputs only, TypeError otherwise (gelu, softplus, as in PyTorch)
  Predicate,  // a bool result from any input (isnan, logical_not, ...)
};

// _(enumerator, operator name, kind)
#define ANATOMY_FORALL_UNARY_OPS(_)      \
  _(Neg, "neg", SameDtype)               \
  _(Abs, "abs", SameDtype)               \
  _(Sign, "sign", SameDtype)             \
  _(Floor, "floor", SameDtype)           \
  _(Ceil, "ceil", SameDtype)             \
  _(Round, "round", SameDtype)           \
  _(Trunc, "trunc", SameDtype)           \
  _(Relu, "relu", SameDtype)             \
  _(NanToNum, "nan_to_num", SameDtype)   \
  _(BitwiseNot, "bitwise_not", SameDtype) \
  _(Exp, "exp", Float)                   \
  _(Exp2, "exp2", Float)                 \
  _(Expm1, "expm1", Float)               \
  _(Log, "log", Float)                   \
  _(Log1p, "log1p", Float)               \
  _(Log2, "log2", Float)                 \
  _(Sqrt, "sqrt", Float)                 \
  _(Rsqrt, "rsqrt", Float)               \
  _(Sin, "sin", Float)                   \
  _(Cos, "cos", Float)                   \
  _(Tan, "tan", Float)                   \
  _(Tanh, "tanh", Float)                 \
  _(Sigmoid, "sigmoid", Float)           \
  _(Silu, "silu", Float)                 \
  _(Erf, "erf", Float)                   \
  _(Reciprocal, "reciprocal", Float)     \
  _(Gelu, "gelu", FloatOnly)             \
  _(GeluTanh, "gelu", FloatOnly)         \
  _(Softplus, "softplus", FloatOnly)     \
  _(Isnan, "isnan", Predicate)           \
  _(Isinf, "isinf", Predicate)           \
  _(Isfinite, "isfinite", Predicate)     \
  _(LogicalNot, "logical_not", Predicate)

enum class UnaryOp : int8_t {
#define ANATOMY_UNARY_ENUM(e, n, k) e,
  ANATOMY_FORALL_UNARY_OPS(ANATOMY_UNARY_ENUM)
#undef ANATOMY_UNARY_ENUM
};

const char* unary_op_name(UnaryOp op);
UnaryKind unary_op_kind(UnaryOp op);

// The non-tensor arguments of the few operators that take any (the others ignore them).
struct UnaryParams {
  double beta = 1, threshold = 20;                       // softplus
  std::optional<double> nan, posinf, neginf;             // nan_to_num (defaults depend on the dtype)
};

// gelu's `approximate`: "none" or "tanh"; ValueError otherwise.
UnaryOp gelu_op(std::string_view approximate);

// Checks the input's dtype against the operator (TypeError naming both) and builds the plan:
// `out` undefined allocates; for in-place, `out` is the input itself.
IterationPlan plan_unary(UnaryOp op, const Tensor& out, const Tensor& self);

}  // namespace anatomy
