// Argument rules of the element-wise binary operators (PyTorch's), and their plans.
#include "anatomy/dispatch/ops/binary_rules.h"

#include <atomic>

#include "anatomy/core/cpu_scalar.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/plan_casts.h"

namespace anatomy {

const char* binary_op_name(BinaryOp op) {
  switch (op) {
#define ANATOMY_BINARY_NAME(e, name, dtypes, fn, group, ...) \
  case BinaryOp::e:                                     \
    return #name;
    ANATOMY_FORALL_BINARY_OPS(ANATOMY_BINARY_NAME)
#undef ANATOMY_BINARY_NAME
  }
  return "?";
}

BinaryDtypes binary_op_dtypes(BinaryOp op) {
  switch (op) {
#define ANATOMY_BINARY_DTYPES(e, name, dtypes, fn, group, ...) \
  case BinaryOp::e:                                       \
    return BinaryDtypes::dtypes;
    ANATOMY_FORALL_BINARY_OPS(ANATOMY_BINARY_DTYPES)
#undef ANATOMY_BINARY_DTYPES
  }
  return BinaryDtypes::Any;
}

bool binary_op_gives_bool(BinaryOp op) { return binary_op_dtypes(op) == BinaryDtypes::Compare; }

bool binary_op_divides(BinaryOp op) {
  return op == BinaryOp::DivTrunc || op == BinaryOp::DivFloor || op == BinaryOp::Remainder || op == BinaryOp::Fmod;
}

namespace {
bool promotes_integers(BinaryOp op) { return binary_op_dtypes(op) == BinaryDtypes::Float; }

IterationPlan build_binary_plan(BinaryOp op, const char* name, const Tensor& out, const Tensor& self,
                                const Tensor& other) {
  IterationPlan::Builder builder(name, operator_casts());
  builder.add_output(out).add_input(self).add_input(other);
  if (promotes_integers(op)) builder.promote_integers_to_float();
  if (binary_op_gives_bool(op)) builder.output_dtype(DType::Bool);
  return builder.build();
}
}  // namespace

IterationPlan plan_binary(BinaryOp op, const Tensor& out, const Tensor& self, const Tensor& other,
                          const Scalar& alpha) {
  const char* name = binary_op_name(op);
  const bool flat = !out.defined() && IterationPlan::is_flat_functional(self, &other) &&
                    !binary_op_gives_bool(op) && !(promotes_integers(op) && !is_floating(self.dtype()));
  IterationPlan plan = flat ? IterationPlan::flat_functional(name, self, &other)
                            : build_binary_plan(op, name, out, self, other);
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
  const BinaryDtypes dtypes = binary_op_dtypes(op);
  if (dtypes == BinaryDtypes::Bitwise || dtypes == BinaryDtypes::Shift) {
    ANATOMY_CHECK(!is_floating(t), TypeError, "{}: expected integer or bool operands, got {}", name,
                  anatomy::name(t));
  }
  if (dtypes == BinaryDtypes::FloatOnly) {
    ANATOMY_CHECK(is_floating(t), TypeError, "{}: expected floating point operands, got {}", name, anatomy::name(t));
  }
  if (dtypes == BinaryDtypes::NoBool || dtypes == BinaryDtypes::Shift) {
    ANATOMY_CHECK(t != DType::Bool, TypeError, "{}: not supported for bool operands", name);
  }
  if (op == BinaryOp::ThresholdBackward) {
    // The kernels convert the threshold to the type they compare in (PyTorch's opmath type).
    const bool reduced = t == DType::Float16 || t == DType::BFloat16;
    check_scalar_fits(alpha, reduced ? DType::Float32 : t, name);
  }
  return plan;
}

void check_binary_values(BinaryOp op, const IterationPlan& plan) {
  const DType t = plan.common_dtype();
  const bool divides = binary_op_divides(op);
  if (is_floating(t) || t == DType::Bool || (!divides && op != BinaryOp::Pow)) return;
  // Scans the second input (the divisor or the exponent) over the plan, in parallel.
  std::atomic<bool> bad{false};
  visit_dtype(t, binary_op_name(op), [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const int operand = plan.num_outputs() + 1;
      plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          const T v = *reinterpret_cast<const T*>(data[operand] + i * s[operand]);
          if (divides ? v == 0 : v < 0) {
            bad.store(true, std::memory_order_relaxed);
            return;
          }
        }
      });
    }
  });
  if (divides) ANATOMY_CHECK(!bad.load(), ValueError, "{}: integer division by zero", binary_op_name(op));
  ANATOMY_CHECK(!bad.load(), ValueError, "pow: Integers to negative integer powers are not allowed");
}

Tensor wrapped_scalar(const Scalar& s) {
  Tensor t = make_cpu_scalar(s, s.dtype());
  t.impl()->set_wrapped_number(true);
  return t;
}

}  // namespace anatomy
