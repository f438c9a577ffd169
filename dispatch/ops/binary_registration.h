// Registers a backend's element-wise binary and ternary operators (functional, in-place, out=;
// threshold_backward, relu's gradient, too) from its two loop functions, so each backend writes
// the loops and nothing else:
//   BinaryLoop(op, plan, alpha)  runs a binary plan (and finishes it);
//   TernaryLoop(op, plan)        runs a where / lerp / clamp plan (and finishes it).
// The Meta backend's loops do nothing: it gets the same plans, checks and result metadata.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "anatomy/core/call_path.h"
#include "anatomy/core/iteration_plan.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/binary_rows.h"
#include "anatomy/dispatch/ops/ternary_rules.h"

namespace anatomy {

// ---- the rules every backend's kernels share (defined in binary.cpp) ----
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
IterationPlan plan_binary(BinaryOp op, const Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha);

// The data-dependent checks a kernel runs before it writes anything: integer division by zero
// (ValueError), integer pow with a negative exponent (ValueError). Reads the plan's CPU inputs.
void check_binary_values(BinaryOp op, const IterationPlan& plan);

// A Scalar as a 0-dim CPU "wrapped number" tensor (fp64, int64 or bool) that promotion treats as
// a Python scalar.
Tensor wrapped_scalar(const Scalar& s);

// ---- the kernels, written once over a backend's loops ----

using BinaryLoopFn = void (*)(BinaryOp, const IterationPlan&, const Scalar&);
using TernaryLoopFn = void (*)(TernaryOp, const IterationPlan&);

// The kernels of one backend, written once over its loops.
template <BinaryLoopFn Loop, TernaryLoopFn Loop3>
struct ElementwiseKernels {
  // A binary op into `out` (undefined: a new tensor).
  static Tensor binary(BinaryOp op, const Tensor& out, const Tensor& self, const Tensor& other,
                       const Scalar& alpha = 1) {
    ANATOMY_CALL_PATH_STEP();
    IterationPlan plan = plan_binary(op, out, self, other, alpha);
    Loop(op, plan, alpha);
    if (out.defined()) out.impl()->bump_version();
    return plan.take_result();
  }
  static Tensor ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c) {
    IterationPlan plan = plan_ternary(op, out, a, b, c);
    Loop3(op, plan);
    if (out.defined()) out.impl()->bump_version();
    return plan.take_result();
  }

  // ---- one binary op, fixed at compile time ----
  template <BinaryOp Op>
  struct Binary {
    static Tensor functional(const Tensor& self, const Tensor& other, const Scalar& alpha) {
      return binary(Op, Tensor(), self, other, alpha);
    }
    static Tensor inplace(const Tensor& self, const Tensor& other, const Scalar& alpha) {
      return binary(Op, self, self, other, alpha);
    }
    static Tensor out(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& result) {
      return binary(Op, result, self, other, alpha);
    }
    // The ops without alpha.
    static Tensor functional_noalpha(const Tensor& self, const Tensor& other) { return functional(self, other, 1); }
    static Tensor inplace_noalpha(const Tensor& self, const Tensor& other) { return inplace(self, other, 1); }
    static Tensor out_noalpha(const Tensor& self, const Tensor& other, const Tensor& result) {
      return out(self, other, 1, result);
    }
  };

  // ---- threshold_backward: a binary plan over (grad_output, self), the threshold as alpha ----
  static Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
    return binary(BinaryOp::ThresholdBackward, Tensor(), grad_output, self, threshold);
  }

  // ---- gelu_backward: a binary plan over (grad_output, self), one row per approximation ----
  static BinaryOp gelu_backward_op(std::string_view approximate) {
    if (approximate == "none") return BinaryOp::GeluBackward;
    if (approximate == "tanh") return BinaryOp::GeluBackwardTanh;
    ANATOMY_THROW(ValueError, "gelu_backward: approximate must be 'none' or 'tanh', got '{}'", approximate);
  }
  static Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate) {
    return binary(gelu_backward_op(approximate), Tensor(), grad_output, self, 1);
  }

  // ---- div with a rounding mode ----
  static BinaryOp div_op(std::optional<std::string_view> mode) {
    if (!mode) return BinaryOp::Div;
    if (*mode == "trunc") return BinaryOp::DivTrunc;
    if (*mode == "floor") return BinaryOp::DivFloor;
    ANATOMY_THROW(ValueError, "div: expected rounding_mode to be one of None, 'trunc' or 'floor', got '{}'", *mode);
  }
  static Tensor div_mode(const Tensor& self, const Tensor& other, std::optional<std::string_view> mode) {
    return binary(div_op(mode), Tensor(), self, other);
  }
  static Tensor div_mode_(const Tensor& self, const Tensor& other, std::optional<std::string_view> mode) {
    return binary(div_op(mode), self, self, other);
  }
  static Tensor div_mode_out(const Tensor& self, const Tensor& other, std::optional<std::string_view> mode,
                             const Tensor& out) {
    return binary(div_op(mode), out, self, other);
  }

  // ---- clamp: both bounds make a ternary plan, one bound a binary one ----
  static Tensor clamp_any(const Tensor& out, const Tensor& self, const Tensor& min, const Tensor& max) {
    ANATOMY_CHECK(min.defined() || max.defined(), ValueError, "clamp: at least one of min and max must be given");
    if (min.defined() && max.defined()) return ternary(TernaryOp::Clamp, out, self, min, max);
    if (min.defined()) return binary(BinaryOp::ClampMin, out, self, min);
    return binary(BinaryOp::ClampMax, out, self, max);
  }
  static Tensor wrap(const std::optional<Scalar>& s) { return s ? wrapped_scalar(*s) : Tensor(); }
  static Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
    return clamp_any(Tensor(), self, wrap(min), wrap(max));
  }
  static Tensor clamp_(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
    return clamp_any(self, self, wrap(min), wrap(max));
  }
  static Tensor clamp_out(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
                          const Tensor& out) {
    return clamp_any(out, self, wrap(min), wrap(max));
  }
  static Tensor clamp_tensor(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
    return clamp_any(Tensor(), self, min.value_or(Tensor()), max.value_or(Tensor()));
  }

  // ---- where and lerp ----
  static Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
    return ternary(TernaryOp::Where, Tensor(), condition, self, other);
  }
  static Tensor where_out(const Tensor& condition, const Tensor& self, const Tensor& other, const Tensor& out) {
    return ternary(TernaryOp::Where, out, condition, self, other);
  }
  static Tensor lerp_scalar(const Tensor& self, const Tensor& end, const Scalar& weight) {
    return ternary(TernaryOp::Lerp, Tensor(), self, end, wrapped_scalar(weight));
  }
  static Tensor lerp_scalar_(const Tensor& self, const Tensor& end, const Scalar& weight) {
    return ternary(TernaryOp::Lerp, self, self, end, wrapped_scalar(weight));
  }
  static Tensor lerp_scalar_out(const Tensor& self, const Tensor& end, const Scalar& weight, const Tensor& out) {
    return ternary(TernaryOp::Lerp, out, self, end, wrapped_scalar(weight));
  }
  static Tensor lerp_tensor(const Tensor& self, const Tensor& end, const Tensor& weight) {
    return ternary(TernaryOp::Lerp, Tensor(), self, end, weight);
  }
  static Tensor lerp_tensor_(const Tensor& self, const Tensor& end, const Tensor& weight) {
    return ternary(TernaryOp::Lerp, self, self, end, weight);
  }
  static Tensor lerp_tensor_out(const Tensor& self, const Tensor& end, const Tensor& weight, const Tensor& out) {
    return ternary(TernaryOp::Lerp, out, self, end, weight);
  }
};

}  // namespace anatomy

namespace anatomy::dispatch {

template <BinaryLoopFn Loop, TernaryLoopFn Loop3>
void register_binary_kernels(Library& m) {
  using K = ElementwiseKernels<Loop, Loop3>;
  using Add = typename K::template Binary<BinaryOp::Add>;
  using Sub = typename K::template Binary<BinaryOp::Sub>;
  using Mul = typename K::template Binary<BinaryOp::Mul>;
  using Div = typename K::template Binary<BinaryOp::Div>;
  m.impl("add.Tensor", named_kernel(&Add::functional, "add"));
  m.impl("sub.Tensor", named_kernel(&Sub::functional, "sub"));
  m.impl("mul.Tensor", named_kernel(&Mul::functional_noalpha, "mul"));
  m.impl("div.Tensor", named_kernel(&Div::functional_noalpha, "div"));
  m.impl("add_.Tensor", named_kernel(&Add::inplace, "add_"));
  m.impl("sub_.Tensor", named_kernel(&Sub::inplace, "sub_"));
  m.impl("mul_.Tensor", named_kernel(&Mul::inplace_noalpha, "mul_"));
  m.impl("div_.Tensor", named_kernel(&Div::inplace_noalpha, "div_"));
  m.impl("add.out", named_kernel(&Add::out, "add.out"));
  m.impl("sub.out", named_kernel(&Sub::out, "sub.out"));
  m.impl("mul.out", named_kernel(&Mul::out_noalpha, "mul.out"));
  m.impl("div.out", named_kernel(&Div::out_noalpha, "div.out"));
  m.impl("div.Tensor_mode", named_kernel(&K::div_mode, "div_mode"));
  m.impl("div_.Tensor_mode", named_kernel(&K::div_mode_, "div_mode_"));
  m.impl("div.out_mode", named_kernel(&K::div_mode_out, "div.out_mode"));
  m.impl("threshold_backward", named_kernel(&K::threshold_backward, "threshold_backward"));
  m.impl("gelu_backward", named_kernel(&K::gelu_backward, "gelu_backward"));

#define ANATOMY_REGISTER_BINARY_FUNCTION(e, name, dtypes, fn, group, functional, inplace, out)               \
  {                                                                                                          \
    using B = typename K::template Binary<BinaryOp::e>;                                                      \
    m.impl(functional, named_kernel(&B::functional_noalpha, #name));                                         \
    if (std::string_view(inplace).size() > 0) m.impl(inplace, named_kernel(&B::inplace_noalpha, #name "_")); \
    m.impl(out, named_kernel(&B::out_noalpha, #name ".out"));                                                \
  }
  ANATOMY_FORALL_BINARY_FUNCTION_OPS(ANATOMY_REGISTER_BINARY_FUNCTION)
#undef ANATOMY_REGISTER_BINARY_FUNCTION

  m.impl("clamp", named_kernel(&K::clamp, "clamp"));
  m.impl("clamp_", named_kernel(&K::clamp_, "clamp_"));
  m.impl("clamp.out", named_kernel(&K::clamp_out, "clamp.out"));
  m.impl("clamp.Tensor", named_kernel(&K::clamp_tensor, "clamp.Tensor"));
  m.impl("where.self", named_kernel(&K::where, "where"));
  m.impl("where.self_out", named_kernel(&K::where_out, "where.out"));
  m.impl("lerp.Scalar", named_kernel(&K::lerp_scalar, "lerp"));
  m.impl("lerp_.Scalar", named_kernel(&K::lerp_scalar_, "lerp_"));
  m.impl("lerp.Scalar_out", named_kernel(&K::lerp_scalar_out, "lerp.out"));
  m.impl("lerp.Tensor", named_kernel(&K::lerp_tensor, "lerp"));
  m.impl("lerp_.Tensor", named_kernel(&K::lerp_tensor_, "lerp_"));
  m.impl("lerp.Tensor_out", named_kernel(&K::lerp_tensor_out, "lerp.out"));
}

}  // namespace anatomy::dispatch
