// Element-wise unary operators: schemas, the C++ functions, Tensor methods and operators.
#include <string>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/unary_registration.h"

namespace anatomy {

ANATOMY_LIBRARY(aten, m) {
  // The function rows of core/op_lists.h: the three forms each.
#define ANATOMY_DEF_UNARY(e, name, kind, fn, group, functional, inplace, out) \
  m.def(std::string(functional) + "(Tensor self) -> Tensor");                 \
  m.def(std::string(inplace) + "(Tensor(a!) self) -> Tensor(a!)");            \
  m.def(std::string(out) + "(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  ANATOMY_FORALL_UNARY_FUNCTION_OPS(ANATOMY_DEF_UNARY)
#undef ANATOMY_DEF_UNARY
  m.def("isnan(Tensor self) -> Tensor");
  m.def("isinf(Tensor self) -> Tensor");
  m.def("isfinite(Tensor self) -> Tensor");
  m.def("signbit(Tensor self) -> Tensor");
  m.def("signbit.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("isposinf(Tensor self) -> Tensor");
  m.def("isposinf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("isneginf(Tensor self) -> Tensor");
  m.def("isneginf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("polygamma(int n, Tensor self) -> Tensor");
  m.def("polygamma_(Tensor(a!) self, int n) -> Tensor(a!)");
  m.def("polygamma.out(int n, Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("logit(Tensor self, float? eps=None) -> Tensor");
  m.def("logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)");
  m.def("logit.out(Tensor self, float? eps=None, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor");
  m.def("leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)");
  m.def("leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor");
  m.def("hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)");
  m.def("hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor");
  m.def("elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)");
  m.def(
      "elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *, Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def("selu(Tensor self) -> Tensor");
  m.def("selu_(Tensor(a!) self) -> Tensor(a!)");
  m.def("gelu(Tensor self, *, str approximate='none') -> Tensor");
  m.def("gelu_(Tensor(a!) self, *, str approximate='none') -> Tensor(a!)");
  m.def("gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out) -> Tensor(a!)");
  m.def("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor");
  m.def("softplus.out(Tensor self, Scalar beta=1, Scalar threshold=20, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor");
  m.def("nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor(a!)");
  m.def(
      "nan_to_num.out(Tensor self, float? nan=None, float? posinf=None, float? neginf=None, *, "
      "Tensor(a!) out) -> Tensor(a!)");
}

using UnarySig = Tensor(const Tensor&);
using UnaryOutSig = Tensor(const Tensor&, const Tensor&);

// The function rows of core/op_lists.h.
#define ANATOMY_DEFINE_UNARY_FUNCTIONS(e, name, kind, fn, group, functional_schema, inplace_schema, out_schema) \
  Tensor name(const Tensor& self) {                                                                             \
    ANATOMY_OP(op, "aten::" functional_schema, UnarySig);                                                       \
    return op.call(self);                                                                                       \
  }                                                                                                             \
  Tensor name##_(const Tensor& self) {                                                                          \
    ANATOMY_OP(op, "aten::" inplace_schema, UnarySig);                                                          \
    return op.call(self);                                                                                       \
  }                                                                                                             \
  Tensor name##_out(const Tensor& out, const Tensor& self) {                                                    \
    ANATOMY_OP(op, "aten::" out_schema, UnaryOutSig);                                                           \
    return op.call(self, out);                                                                                  \
  }
ANATOMY_FORALL_UNARY_FUNCTION_OPS(ANATOMY_DEFINE_UNARY_FUNCTIONS)
#undef ANATOMY_DEFINE_UNARY_FUNCTIONS

Tensor isnan(const Tensor& self) {
  ANATOMY_OP(op, "aten::isnan", UnarySig);
  return op.call(self);
}
Tensor isinf(const Tensor& self) {
  ANATOMY_OP(op, "aten::isinf", UnarySig);
  return op.call(self);
}
Tensor isfinite(const Tensor& self) {
  ANATOMY_OP(op, "aten::isfinite", UnarySig);
  return op.call(self);
}

// The predicates with an out= form, and selu (functional and in-place only, as PyTorch's).
Tensor signbit(const Tensor& self) {
  ANATOMY_OP(op, "aten::signbit", UnarySig);
  return op.call(self);
}
Tensor signbit_out(const Tensor& out, const Tensor& self) {
  ANATOMY_OP(op, "aten::signbit.out", UnaryOutSig);
  return op.call(self, out);
}
Tensor isposinf(const Tensor& self) {
  ANATOMY_OP(op, "aten::isposinf", UnarySig);
  return op.call(self);
}
Tensor isposinf_out(const Tensor& out, const Tensor& self) {
  ANATOMY_OP(op, "aten::isposinf.out", UnaryOutSig);
  return op.call(self, out);
}
Tensor isneginf(const Tensor& self) {
  ANATOMY_OP(op, "aten::isneginf", UnarySig);
  return op.call(self);
}
Tensor isneginf_out(const Tensor& out, const Tensor& self) {
  ANATOMY_OP(op, "aten::isneginf.out", UnaryOutSig);
  return op.call(self, out);
}
Tensor selu(const Tensor& self) {
  ANATOMY_OP(op, "aten::selu", UnarySig);
  return op.call(self);
}
Tensor selu_(const Tensor& self) {
  ANATOMY_OP(op, "aten::selu_", UnarySig);
  return op.call(self);
}

using PolygammaSig = Tensor(int64_t, const Tensor&);
using PolygammaInplaceSig = Tensor(const Tensor&, int64_t);
using PolygammaOutSig = Tensor(int64_t, const Tensor&, const Tensor&);
Tensor polygamma(int64_t n, const Tensor& self) {
  ANATOMY_OP(op, "aten::polygamma", PolygammaSig);
  return op.call(n, self);
}
Tensor polygamma_(const Tensor& self, int64_t n) {
  ANATOMY_OP(op, "aten::polygamma_", PolygammaInplaceSig);
  return op.call(self, n);
}
Tensor polygamma_out(const Tensor& out, int64_t n, const Tensor& self) {
  ANATOMY_OP(op, "aten::polygamma.out", PolygammaOutSig);
  return op.call(n, self, out);
}

using LogitSig = Tensor(const Tensor&, std::optional<double>);
using LogitOutSig = Tensor(const Tensor&, std::optional<double>, const Tensor&);
Tensor logit(const Tensor& self, std::optional<double> eps) {
  ANATOMY_OP(op, "aten::logit", LogitSig);
  return op.call(self, eps);
}
Tensor logit_(const Tensor& self, std::optional<double> eps) {
  ANATOMY_OP(op, "aten::logit_", LogitSig);
  return op.call(self, eps);
}
Tensor logit_out(const Tensor& out, const Tensor& self, std::optional<double> eps) {
  ANATOMY_OP(op, "aten::logit.out", LogitOutSig);
  return op.call(self, eps, out);
}

using ScalarArgSig = Tensor(const Tensor&, const Scalar&);
using ScalarArgOutSig = Tensor(const Tensor&, const Scalar&, const Tensor&);
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope) {
  ANATOMY_OP(op, "aten::leaky_relu", ScalarArgSig);
  return op.call(self, negative_slope);
}
Tensor leaky_relu_(const Tensor& self, const Scalar& negative_slope) {
  ANATOMY_OP(op, "aten::leaky_relu_", ScalarArgSig);
  return op.call(self, negative_slope);
}
Tensor leaky_relu_out(const Tensor& out, const Tensor& self, const Scalar& negative_slope) {
  ANATOMY_OP(op, "aten::leaky_relu.out", ScalarArgOutSig);
  return op.call(self, negative_slope, out);
}

using TwoScalarSig = Tensor(const Tensor&, const Scalar&, const Scalar&);
using TwoScalarOutSig = Tensor(const Tensor&, const Scalar&, const Scalar&, const Tensor&);
Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  ANATOMY_OP(op, "aten::hardtanh", TwoScalarSig);
  return op.call(self, min_val, max_val);
}
Tensor hardtanh_(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  ANATOMY_OP(op, "aten::hardtanh_", TwoScalarSig);
  return op.call(self, min_val, max_val);
}
Tensor hardtanh_out(const Tensor& out, const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  ANATOMY_OP(op, "aten::hardtanh.out", TwoScalarOutSig);
  return op.call(self, min_val, max_val, out);
}

using EluSig = Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&);
using EluOutSig = Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&, const Tensor&);
Tensor elu(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  ANATOMY_OP(op, "aten::elu", EluSig);
  return op.call(self, alpha, scale, input_scale);
}
Tensor elu_(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  ANATOMY_OP(op, "aten::elu_", EluSig);
  return op.call(self, alpha, scale, input_scale);
}
Tensor elu_out(const Tensor& out, const Tensor& self, const Scalar& alpha, const Scalar& scale,
               const Scalar& input_scale) {
  ANATOMY_OP(op, "aten::elu.out", EluOutSig);
  return op.call(self, alpha, scale, input_scale, out);
}

using GeluSig = Tensor(const Tensor&, std::string_view);
using GeluOutSig = Tensor(const Tensor&, std::string_view, const Tensor&);
Tensor gelu(const Tensor& self, std::string_view approximate) {
  ANATOMY_OP(op, "aten::gelu", GeluSig);
  return op.call(self, approximate);
}
Tensor gelu_(const Tensor& self, std::string_view approximate) {
  ANATOMY_OP(op, "aten::gelu_", GeluSig);
  return op.call(self, approximate);
}
Tensor gelu_out(const Tensor& out, const Tensor& self, std::string_view approximate) {
  ANATOMY_OP(op, "aten::gelu.out", GeluOutSig);
  return op.call(self, approximate, out);
}

using SoftplusSig = Tensor(const Tensor&, const Scalar&, const Scalar&);
using SoftplusOutSig = Tensor(const Tensor&, const Scalar&, const Scalar&, const Tensor&);
Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  ANATOMY_OP(op, "aten::softplus", SoftplusSig);
  return op.call(self, beta, threshold);
}
Tensor softplus_out(const Tensor& out, const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  ANATOMY_OP(op, "aten::softplus.out", SoftplusOutSig);
  return op.call(self, beta, threshold, out);
}

using NanToNumSig = Tensor(const Tensor&, std::optional<double>, std::optional<double>, std::optional<double>);
using NanToNumOutSig = Tensor(const Tensor&, std::optional<double>, std::optional<double>, std::optional<double>,
                              const Tensor&);
Tensor nan_to_num(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  ANATOMY_OP(op, "aten::nan_to_num", NanToNumSig);
  return op.call(self, nan, posinf, neginf);
}
Tensor nan_to_num_(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                   std::optional<double> neginf) {
  ANATOMY_OP(op, "aten::nan_to_num_", NanToNumSig);
  return op.call(self, nan, posinf, neginf);
}
Tensor nan_to_num_out(const Tensor& out, const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                      std::optional<double> neginf) {
  ANATOMY_OP(op, "aten::nan_to_num.out", NanToNumOutSig);
  return op.call(self, nan, posinf, neginf, out);
}

// ---- methods ----
#define ANATOMY_DEFINE_UNARY_METHODS(e, name, ...)             \
  Tensor Tensor::name() const { return anatomy::name(*this); } \
  const Tensor& Tensor::name##_() const {                      \
    anatomy::name##_(*this);                                   \
    return *this;                                              \
  }
ANATOMY_FORALL_UNARY_FUNCTION_OPS(ANATOMY_DEFINE_UNARY_METHODS)
#undef ANATOMY_DEFINE_UNARY_METHODS
Tensor Tensor::gelu(std::string_view approximate) const { return anatomy::gelu(*this, approximate); }
Tensor Tensor::softplus(const Scalar& beta, const Scalar& threshold) const {
  return anatomy::softplus(*this, beta, threshold);
}
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) const {
  return anatomy::nan_to_num(*this, nan, posinf, neginf);
}
Tensor Tensor::signbit() const { return anatomy::signbit(*this); }
Tensor Tensor::isposinf() const { return anatomy::isposinf(*this); }
Tensor Tensor::isneginf() const { return anatomy::isneginf(*this); }
Tensor Tensor::polygamma(int64_t n) const { return anatomy::polygamma(n, *this); }
const Tensor& Tensor::polygamma_(int64_t n) const {
  anatomy::polygamma_(*this, n);
  return *this;
}
Tensor Tensor::logit(std::optional<double> eps) const { return anatomy::logit(*this, eps); }
const Tensor& Tensor::logit_(std::optional<double> eps) const {
  anatomy::logit_(*this, eps);
  return *this;
}
Tensor Tensor::isnan() const { return anatomy::isnan(*this); }
Tensor Tensor::isinf() const { return anatomy::isinf(*this); }
Tensor Tensor::isfinite() const { return anatomy::isfinite(*this); }

// ---- operators ----
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }
Tensor operator!(const Tensor& a) { return logical_not(a); }

}  // namespace anatomy
