// The reduction plan (Note [Reduction plan]) and the reduction operators' argument checks.
#include "anatomy/core/reduction_plan.h"

#include <algorithm>

#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/type_promotion.h"
#include "anatomy/dispatch/composite_errors.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {

ReductionPlan::ReductionPlan(const char* op, const Tensor& self, IntArrayRef dims, bool keepdim, bool ordered)
    : op_(op) {
  const int64_t ndim = self.dim();
  ANATOMY_CHECK(ndim <= 64, ValueError, "{}: at most 64 dims, got {}", op, ndim);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim, op);
    ANATOMY_CHECK(!((mask_ >> w) & 1), ValueError, "{}: dim {} appears multiple times in the list of dims", op, w);
    mask_ |= uint64_t{1} << w;
  }
  if (dims.empty()) mask_ = ndim == 64 ? ~uint64_t{0} : (uint64_t{1} << ndim) - 1;
  if (ndim == 0) return;  // one element, reduced or not: P = N = M = 1
  const IntArrayRef sizes = self.sizes();

  // Memory order of the dims that matter (size-1 dims do not), when the input is dense.
  DimVector order;
  for (int64_t d = 0; d < ndim; ++d) {
    if (sizes[d] != 1) order.push_back(d);
  }
  direct_ = self.is_non_overlapping_and_dense();
  if (direct_) {
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return self.strides()[a] > self.strides()[b]; });
    // At most one block of reduced dims: kept*, reduced*, kept*.
    int blocks = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      if (is_reduced(order[i]) && (i == 0 || !is_reduced(order[i - 1]))) ++blocks;
    }
    direct_ = blocks <= 1;
    if (direct_ && ordered) {
      int64_t last = -1;
      for (int64_t d : order) {
        if (!is_reduced(d)) continue;
        direct_ = direct_ && d > last;
        last = d;
      }
    }
  }
  if (direct_) {
    bool seen_reduced = false;
    for (int64_t d : order) {
      if (is_reduced(d)) {
        n_ *= sizes[d];
        seen_reduced = true;
      } else {
        (seen_reduced ? m_ : p_) *= sizes[d];
      }
      perm_.push_back(d);
    }
  } else {
    for (int64_t d = 0; d < ndim; ++d) {
      if (!is_reduced(d)) perm_.push_back(d), p_ *= sizes[d];
    }
    for (int64_t d = 0; d < ndim; ++d) {
      if (is_reduced(d)) perm_.push_back(d), n_ *= sizes[d];
    }
  }
  for (int64_t d = 0; d < ndim; ++d) {
    if (sizes[d] == 1 && std::find(perm_.begin(), perm_.end(), d) == perm_.end()) perm_.push_back(d);
  }

  // Result strides: dense in perm_ order over the kept dims (reduced dims become size 1).
  DimVector keep_strides(ndim, 1);
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(perm_.size()) - 1; i >= 0; --i) {
    const int64_t d = perm_[i];
    keep_strides[d] = stride;
    if (!is_reduced(d)) stride *= sizes[d];
  }
  for (int64_t d = 0; d < ndim; ++d) {
    if (is_reduced(d) && !keepdim) continue;
    result_shape_.push_back(is_reduced(d) ? 1 : sizes[d]);
    result_strides_.push_back(keep_strides[d]);
  }
}

Tensor ReductionPlan::allocate(DType dtype, Device device) const {
  return empty_strided(result_shape_, result_strides_, TensorOptions().dtype(dtype).device(device));
}

Tensor ReductionPlan::dense_input(const Tensor& self) const {
  if (direct_ || self.dim() == 0) return self;
  return self.permute(perm_).contiguous();
}

// ---- the operators' checks and dtypes ----

namespace {

bool is_arg(ReduceKind k) { return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin; }
bool is_extreme(ReduceKind k) {
  return k == ReduceKind::Max || k == ReduceKind::Min || is_arg(k);
}

// The dtype the loop reads (the input is cast to it first) and the dtype of the result.
std::pair<DType, DType> reduction_dtypes(ReduceKind kind, const char* op, DType in, std::optional<DType> dtype) {
  switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Prod: {
      const DType t = dtype ? *dtype : is_integral(in, /*include_bool=*/true) ? DType::Int64 : in;
      return {t, t};
    }
    case ReduceKind::Mean: {
      const DType t = dtype.value_or(in);
      ANATOMY_CHECK(is_floating(t), TypeError,
                    "{}: could not infer the output dtype: the input is {}; mean needs a floating input or dtype", op,
                    name(t));
      return {t, t};
    }
    case ReduceKind::Var:
    case ReduceKind::Std:
    case ReduceKind::Norm:
      ANATOMY_CHECK(is_floating(in), TypeError, "{}: expected a floating point input, got {}", op, name(in));
      return {in, in};
    case ReduceKind::LogSumExp: {
      const DType t = is_floating(in) ? in : kDefaultFloat;
      return {t, t};
    }
    case ReduceKind::Any:
    case ReduceKind::All: return {in, DType::Bool};
    case ReduceKind::CountNonzero: return {in, DType::Int64};
    case ReduceKind::ArgMax:
    case ReduceKind::ArgMin: return {in, DType::Int64};
    case ReduceKind::Max:
    case ReduceKind::Min: return {in, in};
  }
  return {in, in};
}

// The first dim of size 0 among those reduced (`dims`; empty: every dim), for a message.
int64_t first_empty_reduced_dim(const Tensor& self, IntArrayRef dims, const char* op) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    bool reduced = dims.empty();
    for (int64_t r : dims) reduced = reduced || wrap_dim(r, self.dim(), op) == d;
    if (reduced && self.sizes()[d] == 0) return d;
  }
  return 0;
}

}  // namespace

Reduction prepare_reduction(ReduceKind kind, const char* op, const Tensor& self, IntArrayRef dims, bool keepdim,
                            std::optional<DType> dtype, bool all_dims, bool with_indices) {
  ANATOMY_CHECK(self.defined(), ValueError, "{}: the input is an undefined tensor", op);
  ReductionPlan plan(op, self, dims, keepdim, /*ordered=*/is_arg(kind) || with_indices);
  if (is_extreme(kind) && self.numel() == 0) {
    // There is no largest element of nothing.
    ANATOMY_CHECK(!all_dims, ValueError,
                  "{}: expected reduction dim to be specified for input.numel() == 0 (the input has shape [{}])", op,
                  fmt::join(self.sizes(), ", "));
    if (plan.reduced() == 0) {
      ANATOMY_THROW(IndexError, "{}: expected reduction dim {} to have non-zero size (the input has shape [{}])", op,
                    first_empty_reduced_dim(self, dims, op), fmt::join(self.sizes(), ", "));
    }
  }
  auto [compute, result] = reduction_dtypes(kind, op, self.dtype(), dtype);
  Tensor input = self.dtype() == compute ? self : self.to(compute);
  // The result is allocated through empty_strided: a failure names the reduction the user called.
  Tensor values = naming_oom(op, [&] { return plan.allocate(result, self.device()); });
  Tensor indices = with_indices ? naming_oom(op, [&] { return plan.allocate(DType::Int64, self.device()); }) : Tensor();
  return Reduction{std::move(plan), std::move(input), std::move(values), std::move(indices)};
}

void check_reduction_out(const char* op, const Tensor& out, const Tensor& self, IntArrayRef shape, DType dtype) {
  ANATOMY_CHECK(out.defined(), ValueError, "{}: out is an undefined tensor", op);
  ANATOMY_CHECK(out.device() == self.device(), DeviceError, "{}: the output is on {} but the input is on {}", op,
                out.device().str(), self.device().str());
  ANATOMY_CHECK(out.sizes() == shape, ValueError, "{}: the output has shape [{}] but the result has shape [{}]", op,
                fmt::join(out.sizes(), ", "), fmt::join(shape, ", "));
  ANATOMY_CHECK(can_cast(dtype, out.dtype()), TypeError,
                "{}: result type {} can't be cast to the desired output type {}", op, name(dtype), name(out.dtype()));
  check_no_internal_overlap(out, op);
}

}  // namespace anatomy
