// The element-wise unary operators' shared front half: which dtypes each takes, what dtype it
// gives (its row's kind, dispatch/ops/unary_rows.h), its non-tensor arguments and its iteration
// plan (one output, one input), used by every backend's kernels.
#pragma once

#include <optional>
#include <string_view>

#include "anatomy/core/iteration_plan.h"
#include "anatomy/dispatch/ops/unary_rows.h"

namespace anatomy {

const char* unary_op_name(UnaryOp op);
UnaryKind unary_op_kind(UnaryOp op);

// The non-tensor arguments of the few operators that take any (the others ignore them).
struct UnaryParams {
  double beta = 1, threshold = 20;            // softplus
  std::optional<double> nan, posinf, neginf;  // nan_to_num (defaults depend on the dtype)
};

// The arguments as the kernels take them for computing in `dtype`: softplus's beta and
// threshold; nan_to_num's replacements, each rounded to `dtype` first (its defaults: the dtype's
// largest and lowest finite values). Zero for every other op and for integer dtypes.
UnaryScalars unary_scalars(UnaryOp op, DType dtype, const UnaryParams& params);

// gelu's `approximate`: "none" or "tanh"; ValueError otherwise.
UnaryOp gelu_op(std::string_view approximate);

// Checks the input's dtype against the operator (TypeError naming both) and builds the plan:
// `out` undefined allocates; for in-place, `out` is the input itself.
IterationPlan plan_unary(UnaryOp op, const Tensor& out, const Tensor& self);

}  // namespace anatomy
