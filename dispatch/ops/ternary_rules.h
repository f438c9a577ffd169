// The element-wise ternary operators' shared front half (where, lerp, clamp with both bounds):
// argument checks and iteration plans, used by every backend's kernels.
#pragma once

#include "anatomy/core/iteration_plan.h"
#include "anatomy/dispatch/ops/binary_rows.h"

namespace anatomy {

const char* ternary_op_name(TernaryOp op);

// Checks the arguments and builds the plan over [out, a, b, c] (`out` undefined allocates).
// where: the condition is bool, the result dtype is that of a and b promoted (the condition is
// cast to it, so the loop reads three operands of one dtype); lerp: floating tensors only (they may mix widths); clamp:
// no bool. All three inputs broadcast together.
IterationPlan plan_ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c);

}  // namespace anatomy
