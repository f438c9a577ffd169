// Registers a backend's element-wise unary operators (functional, in-place, out=) from its one
// loop function, so each backend writes the loop and nothing else: the function rows of
// core/op_lists.h from the rows, the special rows' front doors by hand.
#pragma once

#include <optional>
#include <string_view>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/unary_rules.h"

namespace anatomy {

// A backend's loop: runs the plan for `op` (and finishes it); the Meta backend's does nothing.
using UnaryLoop = void (*)(UnaryOp, const IterationPlan&, const UnaryParams&);

// The entry points around a backend's loop. `out` undefined allocates the result; in-place
// passes the input as `out`.
template <UnaryLoop Loop>
Tensor run_unary(UnaryOp op, const Tensor& out, const Tensor& self, const UnaryParams& params = {}) {
  IterationPlan plan = plan_unary(op, out, self);
  Loop(op, plan, params);
  if (!out.defined()) return plan.take_result();
  out.impl()->bump_version();
  return out;
}

template <UnaryOp Op, UnaryLoop Loop>
struct UnaryKernels {
  static Tensor functional(const Tensor& self) { return run_unary<Loop>(Op, Tensor(), self); }
  static Tensor inplace(const Tensor& self) { return run_unary<Loop>(Op, self, self); }
  static Tensor out(const Tensor& self, const Tensor& result) { return run_unary<Loop>(Op, result, self); }
};

// The operators with arguments besides the tensor.
template <UnaryLoop Loop>
struct UnaryParamKernels {
  static Tensor gelu(const Tensor& self, std::string_view approximate) {
    return run_unary<Loop>(gelu_op(approximate), Tensor(), self);
  }
  static Tensor gelu_(const Tensor& self, std::string_view approximate) {
    return run_unary<Loop>(gelu_op(approximate), self, self);
  }
  static Tensor gelu_out(const Tensor& self, std::string_view approximate, const Tensor& result) {
    return run_unary<Loop>(gelu_op(approximate), result, self);
  }

  static UnaryParams softplus_params(const Scalar& beta, const Scalar& threshold) {
    UnaryParams p;
    p.beta = beta.to<double>();
    p.threshold = threshold.to<double>();
    return p;
  }
  static Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
    return run_unary<Loop>(UnaryOp::Softplus, Tensor(), self, softplus_params(beta, threshold));
  }
  static Tensor softplus_out(const Tensor& self, const Scalar& beta, const Scalar& threshold, const Tensor& result) {
    return run_unary<Loop>(UnaryOp::Softplus, result, self, softplus_params(beta, threshold));
  }

  static UnaryParams nan_params(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
    UnaryParams p;
    p.nan = nan;
    p.posinf = posinf;
    p.neginf = neginf;
    return p;
  }
  static Tensor nan_to_num(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                           std::optional<double> neginf) {
    return run_unary<Loop>(UnaryOp::NanToNum, Tensor(), self, nan_params(nan, posinf, neginf));
  }
  static Tensor nan_to_num_(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                            std::optional<double> neginf) {
    return run_unary<Loop>(UnaryOp::NanToNum, self, self, nan_params(nan, posinf, neginf));
  }
  static Tensor nan_to_num_out(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                               std::optional<double> neginf, const Tensor& result) {
    return run_unary<Loop>(UnaryOp::NanToNum, result, self, nan_params(nan, posinf, neginf));
  }
};

}  // namespace anatomy

namespace anatomy::dispatch {

template <UnaryLoop Loop>
void register_unary_kernels(Library& m) {
  // The function rows (core/op_lists.h): the three forms each.
#define ANATOMY_REGISTER_UNARY(e, name, kind, fn, group, functional_schema, inplace_schema, out_schema) \
  m.impl(functional_schema, named_kernel(&UnaryKernels<UnaryOp::e, Loop>::functional, #name));          \
  m.impl(inplace_schema, named_kernel(&UnaryKernels<UnaryOp::e, Loop>::inplace, #name "_"));            \
  m.impl(out_schema, named_kernel(&UnaryKernels<UnaryOp::e, Loop>::out, #name ".out"));
  ANATOMY_FORALL_UNARY_FUNCTION_OPS(ANATOMY_REGISTER_UNARY)
#undef ANATOMY_REGISTER_UNARY
  // The predicates have only a functional form (their result is bool, whatever the input).
  m.impl("isnan", named_kernel(&UnaryKernels<UnaryOp::Isnan, Loop>::functional, "isnan"));
  m.impl("isinf", named_kernel(&UnaryKernels<UnaryOp::Isinf, Loop>::functional, "isinf"));
  m.impl("isfinite", named_kernel(&UnaryKernels<UnaryOp::Isfinite, Loop>::functional, "isfinite"));
  using P = UnaryParamKernels<Loop>;
  m.impl("gelu", named_kernel(&P::gelu, "gelu"));
  m.impl("gelu_", named_kernel(&P::gelu_, "gelu_"));
  m.impl("gelu.out", named_kernel(&P::gelu_out, "gelu.out"));
  m.impl("softplus", named_kernel(&P::softplus, "softplus"));
  m.impl("softplus.out", named_kernel(&P::softplus_out, "softplus.out"));
  m.impl("nan_to_num", named_kernel(&P::nan_to_num, "nan_to_num"));
  m.impl("nan_to_num_", named_kernel(&P::nan_to_num_, "nan_to_num_"));
  m.impl("nan_to_num.out", named_kernel(&P::nan_to_num_out, "nan_to_num.out"));
}

}  // namespace anatomy::dispatch
