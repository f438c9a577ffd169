// The element-wise binary operators' shared front half: their argument checks and their
// iteration plans, used by every backend's kernels (the loops differ, the rules do not).
#pragma once

#include "anatomy/core/iteration_plan.h"
#include "anatomy/dispatch/ops/binary_rows.h"

namespace anatomy {

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
