// Argument rules of where, lerp and clamp (PyTorch's), and their plans.
#include "anatomy/dispatch/ops/ternary_rules.h"

#include "anatomy/core/tensor_promotion.h"
#include "anatomy/dispatch/ops/plan_casts.h"

namespace anatomy {

const char* ternary_op_name(TernaryOp op) {
  switch (op) {
#define ANATOMY_TERNARY_NAME(e, name, ...) \
  case TernaryOp::e:                       \
    return #name;
    ANATOMY_FORALL_TERNARY_OPS(ANATOMY_TERNARY_NAME)
#undef ANATOMY_TERNARY_NAME
  }
  return "?";
}

IterationPlan plan_ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c) {
  const char* name = ternary_op_name(op);
  IterationPlan::Builder builder(name, operator_casts());
  builder.add_output(out).add_input(a).add_input(b).add_input(c);
  if (op == TernaryOp::Where) {
    ANATOMY_CHECK(a.dtype() == DType::Bool, TypeError, "where: expected a bool condition, got {}",
                  anatomy::name(a.dtype()));
    // The condition takes no part in promotion.
    ResultTypeState state;
    add_operand(state, b);
    add_operand(state, c);
    builder.common_dtype(state.result());
  }
  IterationPlan plan = builder.build();
  const DType t = plan.common_dtype();
  if (op == TernaryOp::Lerp) {
    // Every tensor floating (a Scalar weight is a wrapped number, which any float accepts).
    for (const Tensor* x : {&a, &b, &c}) {
      ANATOMY_CHECK(is_floating(x->dtype()) || x->impl()->is_wrapped_number(), TypeError,
                    "lerp: expected floating-point inputs, got {}", anatomy::name(x->dtype()));
    }
  }
  if (op == TernaryOp::Clamp) {
    ANATOMY_CHECK(t != DType::Bool, TypeError, "clamp: not supported for bool operands");
  }
  return plan;
}

}  // namespace anatomy
