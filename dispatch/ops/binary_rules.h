// The element-wise binary operators' shared front half: their argument checks and their
// iteration plans, used by every backend's kernels (the loops differ, the rules do not).
#pragma once

#include "anatomy/core/iteration_plan.h"
#include "anatomy/dispatch/ops/binary_rows.h"

namespace anatomy {

// The binary functions of core/op_lists.h with their schemas, PyTorch's names:
// _(enumerator, name, functional overload, in-place overload, out= overload). An empty in-place
// overload means PyTorch has no in-place form: name_ runs the out= form with out = self.
#define ANATOMY_FORALL_BINARY_FUNCTION_SCHEMAS(_)                                                             \
  _(Remainder, remainder, "remainder.Tensor", "remainder_.Tensor", "remainder.Tensor_out")                   \
  _(Fmod, fmod, "fmod.Tensor", "fmod_.Tensor", "fmod.Tensor_out")                                            \
  _(Pow, pow, "pow.Tensor_Tensor", "pow_.Tensor", "pow.Tensor_Tensor_out")                                   \
  _(Maximum, maximum, "maximum", "", "maximum.out")                                                          \
  _(Minimum, minimum, "minimum", "", "minimum.out")                                                          \
  _(Atan2, atan2, "atan2", "atan2_", "atan2.out")                                                            \
  _(Eq, eq, "eq.Tensor", "eq_.Tensor", "eq.Tensor_out")                                                      \
  _(Ne, ne, "ne.Tensor", "ne_.Tensor", "ne.Tensor_out")                                                      \
  _(Lt, lt, "lt.Tensor", "lt_.Tensor", "lt.Tensor_out")                                                      \
  _(Le, le, "le.Tensor", "le_.Tensor", "le.Tensor_out")                                                      \
  _(Gt, gt, "gt.Tensor", "gt_.Tensor", "gt.Tensor_out")                                                      \
  _(Ge, ge, "ge.Tensor", "ge_.Tensor", "ge.Tensor_out")                                                      \
  _(LogicalAnd, logical_and, "logical_and", "logical_and_", "logical_and.out")                               \
  _(LogicalOr, logical_or, "logical_or", "logical_or_", "logical_or.out")                                    \
  _(LogicalXor, logical_xor, "logical_xor", "logical_xor_", "logical_xor.out")                               \
  _(BitwiseAnd, bitwise_and, "bitwise_and.Tensor", "bitwise_and_.Tensor", "bitwise_and.Tensor_out")          \
  _(BitwiseOr, bitwise_or, "bitwise_or.Tensor", "bitwise_or_.Tensor", "bitwise_or.Tensor_out")               \
  _(BitwiseXor, bitwise_xor, "bitwise_xor.Tensor", "bitwise_xor_.Tensor", "bitwise_xor.Tensor_out")          \
  _(LeftShift, bitwise_left_shift, "bitwise_left_shift.Tensor", "bitwise_left_shift_.Tensor",                \
    "bitwise_left_shift.Tensor_out")                                                                          \
  _(RightShift, bitwise_right_shift, "bitwise_right_shift.Tensor", "bitwise_right_shift_.Tensor",            \
    "bitwise_right_shift.Tensor_out")

const char* binary_op_name(BinaryOp op);

// The dtypes column of the op's row (dispatch/ops/binary_rows.h).
BinaryDtypes binary_op_dtypes(BinaryOp op);
// Comparisons and logical ops: bool results, computed in the inputs' common dtype.
bool binary_op_gives_bool(BinaryOp op);
// Integer forms that divide (div with a rounding mode, remainder, fmod): a zero divisor raises.
bool binary_op_divides(BinaryOp op);

// Checks the arguments and builds the plan (`out` undefined allocates). The rules, PyTorch's:
// alpha only for add and sub (integral for an integral computation); bool tensors cannot be
// subtracted; true division and atan2 promote integers to the default float; comparisons and
// logical ops give bool; bitwise ops refuse floating dtypes, shifts bool too; the arithmetic
// that has no bool meaning (rounding division, remainder, fmod, pow, clamp, threshold_backward)
// refuses bool. threshold_backward(grad_output, self) carries its threshold in `alpha`: it must
// fit the computation type (the integer dtype, or float for fp16 and bf16).
IterationPlan plan_binary(BinaryOp op, const Tensor& out, const Tensor& self, const Tensor& other,
                          const Scalar& alpha);

// The data-dependent checks a kernel runs before it writes anything: integer division by zero
// (ValueError), integer pow with a negative exponent (ValueError). Reads the plan's CPU inputs.
void check_binary_values(BinaryOp op, const IterationPlan& plan);

// A Scalar as a 0-dim CPU "wrapped number" tensor (fp64, int64 or bool) that promotion treats as
// a Python scalar.
Tensor wrapped_scalar(const Scalar& s);

}  // namespace anatomy
