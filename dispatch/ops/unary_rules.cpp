// Argument rules of the element-wise unary operators (PyTorch's), and their plans.
#include "anatomy/dispatch/ops/unary_rules.h"

#include "anatomy/dispatch/ops/plan_casts.h"

namespace anatomy {

const char* unary_op_name(UnaryOp op) {
  switch (op) {
#define ANATOMY_UNARY_NAME(e, n, k) \
  case UnaryOp::e:                  \
    return n;
    ANATOMY_FORALL_UNARY_OPS(ANATOMY_UNARY_NAME)
#undef ANATOMY_UNARY_NAME
  }
  return "?";
}

UnaryKind unary_op_kind(UnaryOp op) {
  switch (op) {
#define ANATOMY_UNARY_KIND(e, n, k) \
  case UnaryOp::e:                  \
    return UnaryKind::k;
    ANATOMY_FORALL_UNARY_OPS(ANATOMY_UNARY_KIND)
#undef ANATOMY_UNARY_KIND
  }
  return UnaryKind::SameDtype;
}

UnaryOp gelu_op(std::string_view approximate) {
  if (approximate == "none") return UnaryOp::Gelu;
  if (approximate == "tanh") return UnaryOp::GeluTanh;
  ANATOMY_THROW(ValueError, "gelu: approximate must be 'none' or 'tanh', got '{}'", approximate);
}

namespace {

// The dtypes an operator refuses, checked on the input before anything is allocated or written.
void check_input_dtype(UnaryOp op, DType t) {
  const char* name = unary_op_name(op);
  switch (op) {
    case UnaryOp::Neg:
      ANATOMY_CHECK(t != DType::Bool, TypeError,
                    "neg: negation, the `-` operator, on a bool tensor is not supported; use logical_not or "
                    "bitwise_not instead");
      break;
    // bool has no arithmetic of its own here (PyTorch's kernels are not built for it either);
    // sign keeps bool, as PyTorch's does.
    case UnaryOp::Abs:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
    case UnaryOp::Relu:
      ANATOMY_CHECK(t != DType::Bool, TypeError, "{}: not supported for bool tensors", name);
      break;
    case UnaryOp::BitwiseNot:
      ANATOMY_CHECK(!is_floating(t), TypeError, "bitwise_not: only integer and bool tensors are supported, got {}",
                    anatomy::name(t));
      break;
    default:
      if (unary_op_kind(op) == UnaryKind::FloatOnly) {
        ANATOMY_CHECK(is_floating(t), TypeError, "{}: only floating tensors are supported, got {}", name,
                      anatomy::name(t));
      }
      break;
  }
}

}  // namespace

IterationPlan plan_unary(UnaryOp op, const Tensor& out, const Tensor& self) {
  const char* name = unary_op_name(op);
  ANATOMY_CHECK(self.defined(), ValueError, "{}: the input is an undefined tensor", name);
  check_input_dtype(op, self.dtype());
  const UnaryKind kind = unary_op_kind(op);
  if (!out.defined() && IterationPlan::is_flat_functional(self, nullptr) &&
      (kind == UnaryKind::SameDtype || kind == UnaryKind::FloatOnly || (kind == UnaryKind::Float && is_floating(self.dtype())))) {
    return IterationPlan::flat_functional(name, self, nullptr);
  }
  IterationPlan::Builder builder(name, operator_casts());
  builder.add_output(out).add_input(self);
  switch (kind) {
    case UnaryKind::Float:
      builder.promote_integers_to_float();
      break;
    case UnaryKind::Predicate:
      // Computed in the input's dtype (no cast), written as bool.
      builder.output_dtype(DType::Bool);
      break;
    case UnaryKind::SameDtype:
    case UnaryKind::FloatOnly:
      break;
  }
  return builder.build();
}

}  // namespace anatomy
