// Registers a backend's reduction kernels from its one loop function, so each backend writes the
// loop and nothing else: the checks, result dtypes and allocation are prepare_reduction's
// (core/reduction_plan.h), shared by every backend.
#pragma once

#include <cmath>

#include "anatomy/core/empty_tensor.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/reduction_rules.h"

namespace anatomy::dispatch {

// The non-tensor arguments some reductions take.
struct ReduceArgs {
  double correction = 1;  // var, std
  double p = 2;           // norm
};

// Loop(kind, reduction, args) fills reduction.values (and .indices); the Meta backend's does
// nothing.
using ReduceLoop = void (*)(ReduceKind, const Reduction&, const ReduceArgs&);

template <ReduceLoop Loop>
struct ReduceKernels {
  // The functional form returns the reduction; an out= form (`out` not null) checks `out` against
  // the result before any loop runs, then copies the result into it (so `out` may overlap `self`).
  static Tensor run(ReduceKind kind, const char* op, const Tensor& self, OptionalIntArrayRef dims, bool keepdim,
                    std::optional<DType> dtype = std::nullopt, bool all_dims = false, ReduceArgs args = {},
                    const Tensor* out = nullptr) {
    Reduction r = prepare_reduction(kind, op, self, dims, keepdim, dtype, all_dims);
    if (out != nullptr) check_reduction_out(op, *out, self, r.values.sizes(), r.values.dtype());
    Loop(kind, r, args);
    return finish(r.values, out);
  }
  static Tensor finish(const Tensor& values, const Tensor* out) {
    if (out == nullptr) return values;
    copy_(*out, values);
    return *out;
  }
  static Tensor sum(const Tensor& self, std::optional<DType> dtype) {
    return run(ReduceKind::Sum, "sum", self, std::nullopt, false, dtype);
  }
  static Tensor sum_dim(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
    return run(ReduceKind::Sum, "sum", self, dim, keepdim, dtype);
  }
  static Tensor sum_out(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype,
                        const Tensor& out) {
    return run(ReduceKind::Sum, "sum.out", self, dim, keepdim, dtype, false, {}, &out);
  }
  static Tensor mean(const Tensor& self, std::optional<DType> dtype) {
    return run(ReduceKind::Mean, "mean", self, std::nullopt, false, dtype);
  }
  static Tensor mean_dim(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
    return run(ReduceKind::Mean, "mean", self, dim, keepdim, dtype);
  }
  static Tensor mean_out(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype,
                         const Tensor& out) {
    return run(ReduceKind::Mean, "mean.out", self, dim, keepdim, dtype, false, {}, &out);
  }
  static Tensor prod(const Tensor& self, std::optional<DType> dtype) {
    return run(ReduceKind::Prod, "prod", self, std::nullopt, false, dtype);
  }
  static Tensor prod_dim(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
    return run(ReduceKind::Prod, "prod", self, dim, keepdim, dtype);
  }
  static Tensor prod_out(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype,
                         const Tensor& out) {
    return run(ReduceKind::Prod, "prod.out", self, dim, keepdim, dtype, false, {}, &out);
  }
  static Tensor max(const Tensor& self) { return run(ReduceKind::Max, "max", self, std::nullopt, false, {}, true); }
  static Tensor min(const Tensor& self) { return run(ReduceKind::Min, "min", self, std::nullopt, false, {}, true); }
  static std::tuple<Tensor, Tensor> extreme_dim(ReduceKind kind, const char* op, const Tensor& self, int64_t dim,
                                                bool keepdim) {
    const int64_t d[1] = {wrap_dim(dim, self.dim(), op)};
    Reduction r = prepare_reduction(kind, op, self, d, keepdim, std::nullopt, false, /*with_indices=*/true);
    Loop(kind, r, {});
    return {r.values, r.indices};
  }
  // The out= form: both outs checked before the loop (indices int64 only: an index in another
  // dtype could round), then the results copied in.
  static std::tuple<Tensor, Tensor> extreme_dim_out(ReduceKind kind, const char* op, const Tensor& self, int64_t dim,
                                                    bool keepdim, const Tensor& values, const Tensor& indices) {
    const int64_t d[1] = {wrap_dim(dim, self.dim(), op)};
    Reduction r = prepare_reduction(kind, op, self, d, keepdim, std::nullopt, false, /*with_indices=*/true);
    check_reduction_out(op, values, self, r.values.sizes(), r.values.dtype());
    check_reduction_out(op, indices, self, r.indices.sizes(), r.indices.dtype());
    ANATOMY_CHECK(indices.dtype() == DType::Int64, TypeError, "{}: the indices' out tensor must be int64, got {}", op,
                  name(indices.dtype()));
    ANATOMY_CHECK(!may_overlap(values, indices), ValueError, "{}: the values' and the indices' out tensors overlap",
                  op);
    Loop(kind, r, {});
    copy_(values, r.values);
    copy_(indices, r.indices);
    return {values, indices};
  }
  static std::tuple<Tensor, Tensor> max_out(const Tensor& self, int64_t dim, bool keepdim, const Tensor& values,
                                            const Tensor& indices) {
    return extreme_dim_out(ReduceKind::Max, "max.out", self, dim, keepdim, values, indices);
  }
  static std::tuple<Tensor, Tensor> min_out(const Tensor& self, int64_t dim, bool keepdim, const Tensor& values,
                                            const Tensor& indices) {
    return extreme_dim_out(ReduceKind::Min, "min.out", self, dim, keepdim, values, indices);
  }
  static std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
    return extreme_dim(ReduceKind::Max, "max", self, dim, keepdim);
  }
  static std::tuple<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim) {
    return extreme_dim(ReduceKind::Min, "min", self, dim, keepdim);
  }
  static Tensor amax(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
    return run(ReduceKind::Max, "amax", self, dim, keepdim);
  }
  static Tensor amin(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
    return run(ReduceKind::Min, "amin", self, dim, keepdim);
  }
  static Tensor amax_out(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, const Tensor& out) {
    return run(ReduceKind::Max, "amax.out", self, dim, keepdim, {}, false, {}, &out);
  }
  static Tensor amin_out(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, const Tensor& out) {
    return run(ReduceKind::Min, "amin.out", self, dim, keepdim, {}, false, {}, &out);
  }
  static Tensor arg(ReduceKind kind, const char* op, const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                    const Tensor* out = nullptr) {
    if (!dim) return run(kind, op, self, std::nullopt, keepdim, {}, /*all_dims=*/true, {}, out);
    const int64_t d[1] = {wrap_dim(*dim, self.dim(), op)};
    return run(kind, op, self, d, keepdim, {}, false, {}, out);
  }
  static Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    return arg(ReduceKind::ArgMax, "argmax", self, dim, keepdim);
  }
  static Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    return arg(ReduceKind::ArgMin, "argmin", self, dim, keepdim);
  }
  static Tensor argmax_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
    return arg(ReduceKind::ArgMax, "argmax.out", self, dim, keepdim, &out);
  }
  static Tensor argmin_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
    return arg(ReduceKind::ArgMin, "argmin.out", self, dim, keepdim, &out);
  }
  static Tensor var(const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim) {
    return run(ReduceKind::Var, "var", self, dim, keepdim, {}, false, {correction, 2});
  }
  static Tensor std(const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim) {
    return run(ReduceKind::Std, "std", self, dim, keepdim, {}, false, {correction, 2});
  }
  static Tensor var_out(const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim,
                        const Tensor& out) {
    return run(ReduceKind::Var, "var.out", self, dim, keepdim, {}, false, {correction, 2}, &out);
  }
  static Tensor std_out(const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim,
                        const Tensor& out) {
    return run(ReduceKind::Std, "std.out", self, dim, keepdim, {}, false, {correction, 2}, &out);
  }
  static Tensor norm_into(const char* op, const Tensor& self, const Scalar& p, OptionalIntArrayRef dim, bool keepdim,
                          const Tensor* out) {
    const double pv = p.to<double>();
    ANATOMY_CHECK(pv >= 0 || pv == -std::numeric_limits<double>::infinity(), ValueError,
                  "{}: p must be >= 0, inf or -inf, got {}", op, pv);
    Reduction r = prepare_reduction(ReduceKind::Norm, op, self, dim, keepdim, std::nullopt);
    // The inf-norms are a max and a min: of nothing they have no value (0 and inf would be made up).
    ANATOMY_CHECK(!std::isinf(pv) || r.plan.reduced() > 0, ValueError,
                  "{}: cannot compute the {} norm over an empty extent, which has no identity (the input has "
                  "shape [{}], dim={})",
                  op, pv > 0 ? "inf" : "-inf", fmt::join(self.sizes(), ", "), dims_text(dim));
    if (out != nullptr) check_reduction_out(op, *out, self, r.values.sizes(), r.values.dtype());
    if (dim && dim->empty() && pv > 0) {
      // The norm of one element is its magnitude, exactly; (|x|^p)^(1/p) would round, or
      // overflow in the accumulation type for p = 2.
      copy_(r.values, abs(r.input));
    } else {
      Loop(ReduceKind::Norm, r, {1, pv});
    }
    return finish(r.values, out);
  }
  static Tensor norm(const Tensor& self, const Scalar& p, OptionalIntArrayRef dim, bool keepdim) {
    return norm_into("norm", self, p, dim, keepdim, nullptr);
  }
  static Tensor norm_out(const Tensor& self, const Scalar& p, OptionalIntArrayRef dim, bool keepdim,
                         const Tensor& out) {
    return norm_into("norm.out", self, p, dim, keepdim, &out);
  }
  static Tensor logsumexp(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
    return run(ReduceKind::LogSumExp, "logsumexp", self, dim, keepdim);
  }
  static Tensor logsumexp_out(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, const Tensor& out) {
    return run(ReduceKind::LogSumExp, "logsumexp.out", self, dim, keepdim, {}, false, {}, &out);
  }
  static Tensor any(const Tensor& self) { return run(ReduceKind::Any, "any", self, std::nullopt, false); }
  static Tensor any_dims(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
    return run(ReduceKind::Any, "any", self, dim, keepdim);
  }
  static Tensor all(const Tensor& self) { return run(ReduceKind::All, "all", self, std::nullopt, false); }
  static Tensor all_dims(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
    return run(ReduceKind::All, "all", self, dim, keepdim);
  }
  static Tensor any_out(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, const Tensor& out) {
    return run(ReduceKind::Any, "any.out", self, dim, keepdim, {}, false, {}, &out);
  }
  static Tensor all_out(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, const Tensor& out) {
    return run(ReduceKind::All, "all.out", self, dim, keepdim, {}, false, {}, &out);
  }
  static Tensor count_nonzero(const Tensor& self, OptionalIntArrayRef dim) {
    return run(ReduceKind::CountNonzero, "count_nonzero", self, dim, false);
  }
  static Tensor count_nonzero_out(const Tensor& self, OptionalIntArrayRef dim, const Tensor& out) {
    return run(ReduceKind::CountNonzero, "count_nonzero.out", self, dim, false, {}, false, {}, &out);
  }
};

template <ReduceLoop Loop>
void register_reduce_kernels(Library& m) {
  using K = ReduceKernels<Loop>;
  m.impl("sum", named_kernel(&K::sum, "sum"));
  m.impl("sum.dim_IntList", named_kernel(&K::sum_dim, "sum.dim_IntList"));
  m.impl("sum.IntList_out", named_kernel(&K::sum_out, "sum.IntList_out"));
  m.impl("mean", named_kernel(&K::mean, "mean"));
  m.impl("mean.dim", named_kernel(&K::mean_dim, "mean.dim"));
  m.impl("prod", named_kernel(&K::prod, "prod"));
  m.impl("prod.dim_IntList", named_kernel(&K::prod_dim, "prod.dim_IntList"));
  m.impl("max", named_kernel(&K::max, "max"));
  m.impl("min", named_kernel(&K::min, "min"));
  m.impl("max.dim", named_kernel(&K::max_dim, "max.dim"));
  m.impl("min.dim", named_kernel(&K::min_dim, "min.dim"));
  m.impl("amax", named_kernel(&K::amax, "amax"));
  m.impl("amin", named_kernel(&K::amin, "amin"));
  m.impl("argmax", named_kernel(&K::argmax, "argmax"));
  m.impl("argmin", named_kernel(&K::argmin, "argmin"));
  m.impl("var.correction", named_kernel(&K::var, "var.correction"));
  m.impl("std.correction", named_kernel(&K::std, "std.correction"));
  m.impl("norm.ScalarOpt_dim", named_kernel(&K::norm, "norm.ScalarOpt_dim"));
  m.impl("logsumexp", named_kernel(&K::logsumexp, "logsumexp"));
  m.impl("any", named_kernel(&K::any, "any"));
  m.impl("any.dims", named_kernel(&K::any_dims, "any.dims"));
  m.impl("all", named_kernel(&K::all, "all"));
  m.impl("all.dims", named_kernel(&K::all_dims, "all.dims"));
  m.impl("count_nonzero.dim_IntList", named_kernel(&K::count_nonzero, "count_nonzero.dim_IntList"));
  m.impl("mean.out", named_kernel(&K::mean_out, "mean.out"));
  m.impl("prod.IntList_out", named_kernel(&K::prod_out, "prod.IntList_out"));
  m.impl("amax.out", named_kernel(&K::amax_out, "amax.out"));
  m.impl("amin.out", named_kernel(&K::amin_out, "amin.out"));
  m.impl("argmax.out", named_kernel(&K::argmax_out, "argmax.out"));
  m.impl("argmin.out", named_kernel(&K::argmin_out, "argmin.out"));
  m.impl("var.correction_out", named_kernel(&K::var_out, "var.correction_out"));
  m.impl("std.correction_out", named_kernel(&K::std_out, "std.correction_out"));
  m.impl("norm.out", named_kernel(&K::norm_out, "norm.out"));
  m.impl("logsumexp.out", named_kernel(&K::logsumexp_out, "logsumexp.out"));
  m.impl("any.dims_out", named_kernel(&K::any_out, "any.dims_out"));
  m.impl("all.dims_out", named_kernel(&K::all_out, "all.dims_out"));
  m.impl("count_nonzero.dim_IntList_out", named_kernel(&K::count_nonzero_out, "count_nonzero.dim_IntList_out"));
  m.impl("max.dim_max", named_kernel(&K::max_out, "max.dim_max"));
  m.impl("min.dim_min", named_kernel(&K::min_out, "min.dim_min"));
}

}  // namespace anatomy::dispatch
