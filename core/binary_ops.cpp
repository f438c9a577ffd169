// Argument rules of add, sub, mul and div (PyTorch's), and their plans.
#include "anatomy/core/binary_ops.h"

namespace anatomy {

const char* binary_op_name(BinaryOp op) {
  switch (op) {
#define ANATOMY_BINARY_NAME(e, n) \
  case BinaryOp::e:               \
    return n;
    ANATOMY_FORALL_BINARY_OPS(ANATOMY_BINARY_NAME)
#undef ANATOMY_BINARY_NAME
  }
  return "?";
}

IterationPlan plan_binary(BinaryOp op, const Tensor& out, const Tensor& self, const Tensor& other,
                          const Scalar& alpha) {
  const char* name = binary_op_name(op);
  IterationPlan::Builder builder(name);
  builder.add_output(out).add_input(self).add_input(other);
  if (op == BinaryOp::Div) builder.promote_integers_to_float();
  IterationPlan plan = builder.build();
  const DType t = plan.common_dtype();
  if (op == BinaryOp::Sub) {
    ANATOMY_CHECK(t != DType::Bool, TypeError,
                  "sub: subtracting bool tensors is not supported; use logical_xor or bitwise_not instead");
  }
  if (op == BinaryOp::Add || op == BinaryOp::Sub) {
    ANATOMY_CHECK(is_floating(t) || alpha.is_integral() || alpha.is_bool(), TypeError,
                  "{}: for {} inputs alpha must be an integer, got {}", name, anatomy::name(t), alpha.to_string());
    ANATOMY_CHECK(t != DType::Bool || alpha.is_bool() || alpha.to_int() == 1, TypeError,
                  "{}: for bool inputs alpha must be a bool, got {}", name, alpha.to_string());
  }
  return plan;
}

}  // namespace anatomy
