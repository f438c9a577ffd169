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

namespace anatomy {

// The functional, in-place and out= entry points of one binary operator, around a backend's
// loop: `Loop(op, plan, alpha)` runs the plan (and finishes it); the Meta backend's does nothing.
// Each backend registers these with dispatch::register_binary_kernels.
template <BinaryOp Op, void (*Loop)(BinaryOp, const IterationPlan&, const Scalar&)>
struct BinaryKernels {
  static Tensor functional(const Tensor& self, const Tensor& other, const Scalar& alpha) {
    IterationPlan plan = plan_binary(Op, Tensor(), self, other, alpha);
    Loop(Op, plan, alpha);
    return plan.result();
  }
  static Tensor inplace(const Tensor& self, const Tensor& other, const Scalar& alpha) {
    return out(self, other, alpha, self);
  }
  static Tensor out(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& result) {
    IterationPlan plan = plan_binary(Op, result, self, other, alpha);
    Loop(Op, plan, alpha);
    result.impl()->bump_version();
    return result;
  }
  // mul and div take no alpha.
  static Tensor functional_noalpha(const Tensor& self, const Tensor& other) { return functional(self, other, 1); }
  static Tensor inplace_noalpha(const Tensor& self, const Tensor& other) { return inplace(self, other, 1); }
  static Tensor out_noalpha(const Tensor& self, const Tensor& other, const Tensor& result) {
    return out(self, other, 1, result);
  }
};

}  // namespace anatomy
