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

  static Tensor polygamma(int64_t n, const Tensor& self) {
    check_polygamma_order(n);
    return run_unary<Loop>(UnaryOp::Polygamma, Tensor(), self, order(n));
  }
  static Tensor polygamma_(const Tensor& self, int64_t n) {
    check_polygamma_order(n);
    return run_unary<Loop>(UnaryOp::Polygamma, self, self, order(n));
  }
  static Tensor polygamma_out(int64_t n, const Tensor& self, const Tensor& result) {
    check_polygamma_order(n);
    return run_unary<Loop>(UnaryOp::Polygamma, result, self, order(n));
  }
  static UnaryParams order(int64_t n) {
    UnaryParams p;
    p.n = n;
    return p;
  }

  static UnaryParams logit_params(std::optional<double> eps) {
    UnaryParams p;
    p.eps = eps;
    return p;
  }
  static Tensor logit(const Tensor& self, std::optional<double> eps) {
    return run_unary<Loop>(UnaryOp::Logit, Tensor(), self, logit_params(eps));
  }
  static Tensor logit_(const Tensor& self, std::optional<double> eps) {
    return run_unary<Loop>(UnaryOp::Logit, self, self, logit_params(eps));
  }
  static Tensor logit_out(const Tensor& self, std::optional<double> eps, const Tensor& result) {
    return run_unary<Loop>(UnaryOp::Logit, result, self, logit_params(eps));
  }

  static UnaryParams slope(const Scalar& negative_slope) {
    UnaryParams p;
    p.negative_slope = negative_slope.to<double>();
    return p;
  }
  static Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope) {
    return run_unary<Loop>(UnaryOp::LeakyRelu, Tensor(), self, slope(negative_slope));
  }
  static Tensor leaky_relu_(const Tensor& self, const Scalar& negative_slope) {
    return run_unary<Loop>(UnaryOp::LeakyRelu, self, self, slope(negative_slope));
  }
  static Tensor leaky_relu_out(const Tensor& self, const Scalar& negative_slope, const Tensor& result) {
    return run_unary<Loop>(UnaryOp::LeakyRelu, result, self, slope(negative_slope));
  }

  static UnaryParams bounds(const Scalar& min_val, const Scalar& max_val) {
    UnaryParams p;
    p.min_val = min_val.to<double>();
    p.max_val = max_val.to<double>();
    return p;
  }
  static Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
    return run_unary<Loop>(UnaryOp::Hardtanh, Tensor(), self, bounds(min_val, max_val));
  }
  static Tensor hardtanh_(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
    return run_unary<Loop>(UnaryOp::Hardtanh, self, self, bounds(min_val, max_val));
  }
  static Tensor hardtanh_out(const Tensor& self, const Scalar& min_val, const Scalar& max_val, const Tensor& result) {
    return run_unary<Loop>(UnaryOp::Hardtanh, result, self, bounds(min_val, max_val));
  }

  static UnaryParams elu_params(const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
    UnaryParams p;
    p.alpha = alpha.to<double>();
    p.scale = scale.to<double>();
    p.input_scale = input_scale.to<double>();
    return p;
  }
  static Tensor elu(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
    return run_unary<Loop>(UnaryOp::Elu, Tensor(), self, elu_params(alpha, scale, input_scale));
  }
  static Tensor elu_(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
    return run_unary<Loop>(UnaryOp::Elu, self, self, elu_params(alpha, scale, input_scale));
  }
  static Tensor elu_out(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
                        const Tensor& result) {
    return run_unary<Loop>(UnaryOp::Elu, result, self, elu_params(alpha, scale, input_scale));
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
  m.impl("signbit", named_kernel(&UnaryKernels<UnaryOp::Signbit, Loop>::functional, "signbit"));
  m.impl("signbit.out", named_kernel(&UnaryKernels<UnaryOp::Signbit, Loop>::out, "signbit.out"));
  m.impl("isposinf", named_kernel(&UnaryKernels<UnaryOp::Isposinf, Loop>::functional, "isposinf"));
  m.impl("isposinf.out", named_kernel(&UnaryKernels<UnaryOp::Isposinf, Loop>::out, "isposinf.out"));
  m.impl("isneginf", named_kernel(&UnaryKernels<UnaryOp::Isneginf, Loop>::functional, "isneginf"));
  m.impl("isneginf.out", named_kernel(&UnaryKernels<UnaryOp::Isneginf, Loop>::out, "isneginf.out"));
  m.impl("selu", named_kernel(&UnaryKernels<UnaryOp::Selu, Loop>::functional, "selu"));
  m.impl("selu_", named_kernel(&UnaryKernels<UnaryOp::Selu, Loop>::inplace, "selu_"));
  using P = UnaryParamKernels<Loop>;
  m.impl("gelu", named_kernel(&P::gelu, "gelu"));
  m.impl("gelu_", named_kernel(&P::gelu_, "gelu_"));
  m.impl("gelu.out", named_kernel(&P::gelu_out, "gelu.out"));
  m.impl("softplus", named_kernel(&P::softplus, "softplus"));
  m.impl("softplus.out", named_kernel(&P::softplus_out, "softplus.out"));
  m.impl("polygamma", named_kernel(&P::polygamma, "polygamma"));
  m.impl("polygamma_", named_kernel(&P::polygamma_, "polygamma_"));
  m.impl("polygamma.out", named_kernel(&P::polygamma_out, "polygamma.out"));
  m.impl("logit", named_kernel(&P::logit, "logit"));
  m.impl("logit_", named_kernel(&P::logit_, "logit_"));
  m.impl("logit.out", named_kernel(&P::logit_out, "logit.out"));
  m.impl("leaky_relu", named_kernel(&P::leaky_relu, "leaky_relu"));
  m.impl("leaky_relu_", named_kernel(&P::leaky_relu_, "leaky_relu_"));
  m.impl("leaky_relu.out", named_kernel(&P::leaky_relu_out, "leaky_relu.out"));
  m.impl("hardtanh", named_kernel(&P::hardtanh, "hardtanh"));
  m.impl("hardtanh_", named_kernel(&P::hardtanh_, "hardtanh_"));
  m.impl("hardtanh.out", named_kernel(&P::hardtanh_out, "hardtanh.out"));
  m.impl("elu", named_kernel(&P::elu, "elu"));
  m.impl("elu_", named_kernel(&P::elu_, "elu_"));
  m.impl("elu.out", named_kernel(&P::elu_out, "elu.out"));
  m.impl("nan_to_num", named_kernel(&P::nan_to_num, "nan_to_num"));
  m.impl("nan_to_num_", named_kernel(&P::nan_to_num_, "nan_to_num_"));
  m.impl("nan_to_num.out", named_kernel(&P::nan_to_num_out, "nan_to_num.out"));
}

}  // namespace anatomy::dispatch
