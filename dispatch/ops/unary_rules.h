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
  double beta = 1, threshold = 20;               // softplus
  std::optional<double> nan, posinf, neginf;     // nan_to_num (defaults depend on the dtype)
  int64_t n = 0;                                 // polygamma's order
  std::optional<double> eps;                     // logit's clamp
  double negative_slope = 0.01;                  // leaky_relu
  double min_val = -1, max_val = 1;              // hardtanh
  double alpha = 1, scale = 1, input_scale = 1;  // elu
};

// selu's constants: elu with these alpha and scale.
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;

// The arguments as the kernels take them for computing in `dtype`: softplus's beta and
// threshold, polygamma's order, logit's eps (-1 without one), leaky_relu's slope, hardtanh's
// bounds, elu's and selu's alpha, scale and input scale; nan_to_num's replacements, each rounded to `dtype` first (its
// defaults: the dtype's largest and lowest finite values). Zero for every other op and for integer dtypes.
UnaryScalars unary_scalars(UnaryOp op, DType dtype, const UnaryParams& params);

// polygamma's order: n >= 0, ValueError otherwise.
void check_polygamma_order(int64_t n);

// gelu's `approximate`: "none" or "tanh"; ValueError otherwise.
UnaryOp gelu_op(std::string_view approximate);

// Checks the input's dtype against the operator (TypeError naming both) and builds the plan:
// `out` undefined allocates; for in-place, `out` is the input itself.
IterationPlan plan_unary(UnaryOp op, const Tensor& out, const Tensor& self);

}  // namespace anatomy
