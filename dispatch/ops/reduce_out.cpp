// The out= forms of the reductions: schemas and the C++ functions. Every backend's kernel is the
// functional one's with a checked copy into `out` at the end (dispatch/ops/reduce_registration.h);
// the names of the overloads are PyTorch's where PyTorch has the operator with these arguments.
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def(
      "prod.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def("amax.out(Tensor self, int[1]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("amin.out(Tensor self, int[1]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "var.correction_out(Tensor self, int[1]? dim=None, float correction=1, bool keepdim=False, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "std.correction_out(Tensor self, int[1]? dim=None, float correction=1, bool keepdim=False, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def("norm.out(Tensor self, Scalar p=2, int[1]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("logsumexp.out(Tensor self, int[1]? dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("any.dims_out(Tensor self, int[1]? dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("all.dims_out(Tensor self, int[1]? dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("count_nonzero.dim_IntList_out(Tensor self, int[1]? dim=None, *, Tensor(a!) out) -> Tensor(a!)");
  // PyTorch's names: `max` receives the values and `max_values` the indices.
  m.def(
      "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> "
      "(Tensor(a!) values, Tensor(b!) indices)");
  m.def(
      "min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, Tensor(b!) min_indices) -> "
      "(Tensor(a!) values, Tensor(b!) indices)");
}

namespace {
using DimDTypeOut = Tensor(const Tensor&, OptionalIntArrayRef, bool, std::optional<DType>, const Tensor&);
using DimOut = Tensor(const Tensor&, OptionalIntArrayRef, bool, const Tensor&);
using ArgOut = Tensor(const Tensor&, std::optional<int64_t>, bool, const Tensor&);
using VarOut = Tensor(const Tensor&, OptionalIntArrayRef, double, bool, const Tensor&);
using ExtremeOut = std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool, const Tensor&, const Tensor&);
}  // namespace

Tensor sum_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
               std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::sum.IntList_out", DimDTypeOut);
  return op.call(self, dim, keepdim, dtype, out);
}
Tensor mean_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::mean.out", DimDTypeOut);
  return op.call(self, dim, keepdim, dtype, out);
}
Tensor prod_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::prod.IntList_out", DimDTypeOut);
  return op.call(self, dim, keepdim, dtype, out);
}
Tensor amax_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::amax.out", DimOut);
  return op.call(self, dim, keepdim, out);
}
Tensor amin_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::amin.out", DimOut);
  return op.call(self, dim, keepdim, out);
}
Tensor argmax_out(const Tensor& out, const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  ANATOMY_OP(op, "aten::argmax.out", ArgOut);
  return op.call(self, dim, keepdim, out);
}
Tensor argmin_out(const Tensor& out, const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  ANATOMY_OP(op, "aten::argmin.out", ArgOut);
  return op.call(self, dim, keepdim, out);
}
Tensor var_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim) {
  ANATOMY_OP(op, "aten::var.correction_out", VarOut);
  return op.call(self, dim, correction, keepdim, out);
}
Tensor std_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim) {
  ANATOMY_OP(op, "aten::std.correction_out", VarOut);
  return op.call(self, dim, correction, keepdim, out);
}
Tensor norm_out(const Tensor& out, const Tensor& self, const Scalar& p, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::norm.out", Tensor(const Tensor&, const Scalar&, OptionalIntArrayRef, bool, const Tensor&));
  return op.call(self, p, dim, keepdim, out);
}
Tensor logsumexp_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::logsumexp.out", DimOut);
  return op.call(self, dim, keepdim, out);
}
Tensor any_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::any.dims_out", DimOut);
  return op.call(self, dim, keepdim, out);
}
Tensor all_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  ANATOMY_OP(op, "aten::all.dims_out", DimOut);
  return op.call(self, dim, keepdim, out);
}
Tensor count_nonzero_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim) {
  ANATOMY_OP(op, "aten::count_nonzero.dim_IntList_out", Tensor(const Tensor&, OptionalIntArrayRef, const Tensor&));
  return op.call(self, dim, out);
}
std::tuple<Tensor, Tensor> max_out(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t dim,
                                   bool keepdim) {
  ANATOMY_OP(op, "aten::max.dim_max", ExtremeOut);
  return op.call(self, dim, keepdim, values, indices);
}
std::tuple<Tensor, Tensor> min_out(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t dim,
                                   bool keepdim) {
  ANATOMY_OP(op, "aten::min.dim_min", ExtremeOut);
  return op.call(self, dim, keepdim, values, indices);
}

}  // namespace anatomy
