// The element-wise arithmetic operators' shared front half: their argument checks and their
// iteration plans, used by every backend's kernels (the loops differ, the rules do not).
#pragma once

#include "anatomy/core/iteration_plan.h"

namespace anatomy {

// _(enumerator, operator name)
#define ANATOMY_FORALL_BINARY_OPS(_) \
  _(Add, "add")                      \
  _(Sub, "sub")                      \
  _(Mul, "mul")                      \
  _(Div, "div")

enum class BinaryOp : int8_t {
#define ANATOMY_BINARY_ENUM(e, n) e,
  ANATOMY_FORALL_BINARY_OPS(ANATOMY_BINARY_ENUM)
#undef ANATOMY_BINARY_ENUM
};

const char* binary_op_name(BinaryOp op);

// Checks the arguments (alpha only for add and sub; an integral computation takes an integral
// alpha; bool tensors cannot be subtracted) and builds the plan: `out` undefined allocates.
IterationPlan plan_binary(BinaryOp op, const Tensor& out, const Tensor& self, const Tensor& other,
                          const Scalar& alpha);

}  // namespace anatomy
