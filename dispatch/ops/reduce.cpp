// Reductions: schemas, the C++ functions and Tensor methods (the out= forms: reduce_out.cpp). The kernels are the
// backends' (backends/cpu/reduce_*.cpp, backends/meta/reduce_meta.cpp, registered through
// dispatch/ops/reduce_registration.h).
#include "anatomy/dispatch/ops/reduce.h"

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {

// dim lists are `int[1]?`: None reduces every dim, an empty list none (docs/ops.md, "Reductions").
ANATOMY_LIBRARY(aten, m) {
  m.def("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor");
  m.def("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  m.def("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor");
  m.def("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  m.def("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor");
  m.def("prod.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  m.def("max(Tensor self) -> Tensor");
  m.def("min(Tensor self) -> Tensor");
  m.def("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  m.def("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  m.def("amax(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor");
  m.def("amin(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor");
  m.def("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor");
  m.def("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor");
  m.def("var.correction(Tensor self, int[1]? dim=None, float correction=1, bool keepdim=False) -> Tensor");
  m.def("std.correction(Tensor self, int[1]? dim=None, float correction=1, bool keepdim=False) -> Tensor");
  m.def("norm.ScalarOpt_dim(Tensor self, Scalar p=2, int[1]? dim=None, bool keepdim=False) -> Tensor");
  m.def("logsumexp(Tensor self, int[1]? dim, bool keepdim=False) -> Tensor");
  m.def("any(Tensor self) -> Tensor");
  m.def("any.dims(Tensor self, int[1]? dim, bool keepdim=False) -> Tensor");
  m.def("all(Tensor self) -> Tensor");
  m.def("all.dims(Tensor self, int[1]? dim, bool keepdim=False) -> Tensor");
  m.def("count_nonzero.dim_IntList(Tensor self, int[1]? dim=None) -> Tensor");
}

namespace {
using DTypeSig = Tensor(const Tensor&, std::optional<DType>);
using DimDTypeSig = Tensor(const Tensor&, OptionalIntArrayRef, bool, std::optional<DType>);
using DimSig = Tensor(const Tensor&, OptionalIntArrayRef, bool);
using SelfSig = Tensor(const Tensor&);
using ExtremeDimSig = std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool);
using ArgSig = Tensor(const Tensor&, std::optional<int64_t>, bool);
using VarSig = Tensor(const Tensor&, OptionalIntArrayRef, double, bool);
}  // namespace

Tensor sum(const Tensor& self, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::sum", DTypeSig);
  return op.call(self, dtype);
}
Tensor sum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::sum.dim_IntList", DimDTypeSig);
  return op.call(self, dim, keepdim, dtype);
}
Tensor mean(const Tensor& self, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::mean", DTypeSig);
  return op.call(self, dtype);
}
Tensor mean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::mean.dim", DimDTypeSig);
  return op.call(self, dim, keepdim, dtype);
}
Tensor prod(const Tensor& self, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::prod", DTypeSig);
  return op.call(self, dtype);
}
Tensor prod(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::prod.dim_IntList", DimDTypeSig);
  return op.call(self, dim, keepdim, dtype);
}
Tensor max(const Tensor& self) {
  ANATOMY_OP(op, "aten::max", SelfSig);
  return op.call(self);
}
Tensor min(const Tensor& self) {
  ANATOMY_OP(op, "aten::min", SelfSig);
  return op.call(self);
}
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim) {
  ANATOMY_OP(op, "aten::max.dim", ExtremeDimSig);
  return op.call(self, dim, keepdim);
}
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim) {
  ANATOMY_OP(op, "aten::min.dim", ExtremeDimSig);
  return op.call(self, dim, keepdim);
}
Tensor amax(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::amax", DimSig);
  return op.call(self, dim, keepdim);
}
Tensor amin(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::amin", DimSig);
  return op.call(self, dim, keepdim);
}
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  ANATOMY_OP(op, "aten::argmax", ArgSig);
  return op.call(self, dim, keepdim);
}
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  ANATOMY_OP(op, "aten::argmin", ArgSig);
  return op.call(self, dim, keepdim);
}
Tensor var(const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim) {
  ANATOMY_OP(op, "aten::var.correction", VarSig);
  return op.call(self, dim, correction, keepdim);
}
Tensor std(const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim) {
  ANATOMY_OP(op, "aten::std.correction", VarSig);
  return op.call(self, dim, correction, keepdim);
}
Tensor norm(const Tensor& self, const Scalar& p, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::norm.ScalarOpt_dim", Tensor(const Tensor&, const Scalar&, OptionalIntArrayRef, bool));
  return op.call(self, p, dim, keepdim);
}
Tensor logsumexp(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::logsumexp", DimSig);
  return op.call(self, dim, keepdim);
}
Tensor any(const Tensor& self) {
  ANATOMY_OP(op, "aten::any", SelfSig);
  return op.call(self);
}
Tensor any(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::any.dims", DimSig);
  return op.call(self, dim, keepdim);
}
Tensor all(const Tensor& self) {
  ANATOMY_OP(op, "aten::all", SelfSig);
  return op.call(self);
}
Tensor all(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::all.dims", DimSig);
  return op.call(self, dim, keepdim);
}
Tensor count_nonzero(const Tensor& self, OptionalIntArrayRef dim) {
  ANATOMY_OP(op, "aten::count_nonzero.dim_IntList", Tensor(const Tensor&, OptionalIntArrayRef));
  return op.call(self, dim);
}

// ---- methods ----
Tensor Tensor::sum(std::optional<DType> dtype) const { return anatomy::sum(*this, dtype); }
Tensor Tensor::sum(OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) const {
  return anatomy::sum(*this, dim, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<DType> dtype) const { return anatomy::mean(*this, dtype); }
Tensor Tensor::mean(OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) const {
  return anatomy::mean(*this, dim, keepdim, dtype);
}
Tensor Tensor::prod(std::optional<DType> dtype) const { return anatomy::prod(*this, dtype); }
Tensor Tensor::prod(OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) const {
  return anatomy::prod(*this, dim, keepdim, dtype);
}
Tensor Tensor::max() const { return anatomy::max(*this); }
Tensor Tensor::min() const { return anatomy::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return anatomy::max(*this, dim, keepdim); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return anatomy::min(*this, dim, keepdim); }
Tensor Tensor::amax(OptionalIntArrayRef dim, bool keepdim) const { return anatomy::amax(*this, dim, keepdim); }
Tensor Tensor::amin(OptionalIntArrayRef dim, bool keepdim) const { return anatomy::amin(*this, dim, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return anatomy::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return anatomy::argmin(*this, dim, keepdim); }
Tensor Tensor::var(OptionalIntArrayRef dim, double correction, bool keepdim) const {
  return anatomy::var(*this, dim, correction, keepdim);
}
Tensor Tensor::std(OptionalIntArrayRef dim, double correction, bool keepdim) const {
  return anatomy::std(*this, dim, correction, keepdim);
}
Tensor Tensor::norm(const Scalar& p, OptionalIntArrayRef dim, bool keepdim) const {
  return anatomy::norm(*this, p, dim, keepdim);
}
Tensor Tensor::logsumexp(OptionalIntArrayRef dim, bool keepdim) const {
  return anatomy::logsumexp(*this, dim, keepdim);
}
Tensor Tensor::any() const { return anatomy::any(*this); }
Tensor Tensor::any(OptionalIntArrayRef dim, bool keepdim) const { return anatomy::any(*this, dim, keepdim); }
Tensor Tensor::all() const { return anatomy::all(*this); }
Tensor Tensor::all(OptionalIntArrayRef dim, bool keepdim) const { return anatomy::all(*this, dim, keepdim); }
Tensor Tensor::count_nonzero(OptionalIntArrayRef dim) const { return anatomy::count_nonzero(*this, dim); }

}  // namespace anatomy
