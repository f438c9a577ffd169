// Element-wise arithmetic operators: schemas, the C++ functions, Tensor methods and operators.
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {

ANATOMY_LIBRARY(aten, m) {
  m.def("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("mul.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("div.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  m.def("sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  m.def("mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
}

using AlphaSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using PlainSig = Tensor(const Tensor&, const Tensor&);
using AlphaOutSig = Tensor(const Tensor&, const Tensor&, const Scalar&, const Tensor&);
using PlainOutSig = Tensor(const Tensor&, const Tensor&, const Tensor&);

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::add.Tensor", AlphaSig);
  return op.call(self, other, alpha);
}
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::sub.Tensor", AlphaSig);
  return op.call(self, other, alpha);
}
Tensor mul(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::mul.Tensor", PlainSig);
  return op.call(self, other);
}
Tensor div(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::div.Tensor", PlainSig);
  return op.call(self, other);
}
Tensor add_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::add_.Tensor", AlphaSig);
  return op.call(self, other, alpha);
}
Tensor sub_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::sub_.Tensor", AlphaSig);
  return op.call(self, other, alpha);
}
Tensor mul_(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::mul_.Tensor", PlainSig);
  return op.call(self, other);
}
Tensor div_(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::div_.Tensor", PlainSig);
  return op.call(self, other);
}
Tensor add_out(const Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::add.out", AlphaOutSig);
  return op.call(self, other, alpha, out);
}
Tensor sub_out(const Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::sub.out", AlphaOutSig);
  return op.call(self, other, alpha, out);
}
Tensor mul_out(const Tensor& out, const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::mul.out", PlainOutSig);
  return op.call(self, other, out);
}
Tensor div_out(const Tensor& out, const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::div.out", PlainOutSig);
  return op.call(self, other, out);
}

// ---- methods ----
Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const { return anatomy::add(*this, other, alpha); }
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const { return anatomy::sub(*this, other, alpha); }
Tensor Tensor::mul(const Tensor& other) const { return anatomy::mul(*this, other); }
Tensor Tensor::div(const Tensor& other) const { return anatomy::div(*this, other); }
const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const {
  anatomy::add_(*this, other, alpha);
  return *this;
}
const Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) const {
  anatomy::sub_(*this, other, alpha);
  return *this;
}
const Tensor& Tensor::mul_(const Tensor& other) const {
  anatomy::mul_(*this, other);
  return *this;
}
const Tensor& Tensor::div_(const Tensor& other) const {
  anatomy::div_(*this, other);
  return *this;
}

// ---- operators: a Scalar becomes a wrapped number (a 0-dim CPU tensor of fp64, int64 or bool
// that promotion treats as a Python scalar) ----
namespace {
Tensor wrap(const Scalar& s) {
  Tensor t = scalar_tensor(s, s.dtype());
  t.impl()->set_wrapped_number(true);
  return t;
}
}  // namespace

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, wrap(b)); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, wrap(b)); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, wrap(b)); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, wrap(b)); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(wrap(a), b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return sub(wrap(a), b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(wrap(a), b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(wrap(a), b); }

}  // namespace anatomy
