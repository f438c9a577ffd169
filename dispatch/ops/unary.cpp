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
Tensor Tensor::isnan() const { return anatomy::isnan(*this); }
Tensor Tensor::isinf() const { return anatomy::isinf(*this); }
Tensor Tensor::isfinite() const { return anatomy::isfinite(*this); }

// ---- operators ----
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }
Tensor operator!(const Tensor& a) { return logical_not(a); }

}  // namespace anatomy
