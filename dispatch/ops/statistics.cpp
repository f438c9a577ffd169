// Statistics written over other operators (CompositeImplicitAutograd: every backend that runs
// the parts runs these, and autograd differentiates the parts): var_mean, std_mean, nansum,
// nanmean, aminmax, median, kthvalue and mode.
//
// Note [Order statistics through a stable sort]
// median and kthvalue sort the input along the dim (below autograd: the order carries no gradient) (the engine's sort
// is stable and puts NaN last), pick the position they need in each row, and read the value with gather at the index
// the sort gives: the indices are deterministic (among equal values, the k-th in input order), and the gradient flows
// through gather to exactly that element, as PyTorch's does. A sort costs O(n log n) where a selection would cost O(n);
// no benchmark row holds these to a speed.
//
// Note [mode as runs of a stable sort]
// mode sorts each row the same way, marks where the runs of equal values start and numbers them
// (sorted_runs.h, which unique and isin share: NaN != NaN, so every NaN is a run of its own, as
// the != of PyTorch's CPU kernel makes it), counts each run's length with scatter_add and gives
// every position its run's length. The first position holding the greatest length (max's first
// index) starts the winning run: the smallest of the most frequent values, which is the value
// PyTorch's CPU kernel keeps (it walks the runs in ascending order and replaces its answer only
// on a strictly greater count). The index is that of the run's last element in the stable order,
// the value's last occurrence in input order: what PyTorch's CPU kernel returns where its sort
// (std::sort, not stable) keeps equal values in order, as it does for rows of up to 16 elements;
// for longer rows PyTorch returns an occurrence its sort happens to leave last. The value is read
// with gather at that index, so the gradient reaches exactly that element.
#include <limits>
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/local_key_set.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/print.h"
#include "anatomy/dispatch/ops/sorted_runs.h"

namespace anatomy {
namespace {

using TwoTensors = std::tuple<Tensor, Tensor>;

void check_floating(const Tensor& self, const char* op) {
  ANATOMY_CHECK(is_floating(self.dtype()), TypeError, "{}: expected a floating input, got {}", op, name(self.dtype()));
}

TwoTensors var_mean_composite(const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim) {
  check_floating(self, "var_mean");
  return naming_errors("var_mean", [&]() -> TwoTensors {
    return {var(self, dim, correction, keepdim), mean(self, dim, keepdim)};
  });
}

TwoTensors std_mean_composite(const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim) {
  check_floating(self, "std_mean");
  return naming_errors("std_mean", [&]() -> TwoTensors {
    return {std(self, dim, correction, keepdim), mean(self, dim, keepdim)};
  });
}

// NaN counts as zero; integers and bool have no NaN and sum as sum does.
Tensor nansum_composite(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  return naming_errors("nansum", [&] {
    if (!is_floating(self.dtype())) return sum(self, dim, keepdim, dtype);
    return sum(where(isnan(self), Scalar(0), self), dim, keepdim, dtype);
  });
}

// The mean of the elements that are not NaN; NaN where there are none, as 0 / 0. fp16 and bf16
// sum and divide in fp32 and round once, as mean does.
Tensor nanmean_composite(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  const DType t = dtype.value_or(self.dtype());
  ANATOMY_CHECK(is_floating(t), TypeError, "nanmean: expected a floating input or dtype, got {}", name(t));
  const DType acc = t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t;
  return naming_errors("nanmean", [&] {
    const Tensor counted = logical_not(isnan(self)).sum(dim, keepdim);
    return div(nansum(self, dim, keepdim, acc), counted).to(t);
  });
}

TwoTensors aminmax_composite(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  if (dim) {
    const int64_t d = wrap_dim(*dim, self.dim(), "aminmax");
    ANATOMY_CHECK(self.dim() == 0 || self.size(d) > 0, IndexError,
                  "aminmax: dim {} of a tensor of shape {} has no elements to reduce", *dim,
                  shape_string(self.sizes()));
    return {amin(self, IntArrayRef{d}, keepdim), amax(self, IntArrayRef{d}, keepdim)};
  }
  ANATOMY_CHECK(self.numel() > 0, ValueError, "aminmax: a tensor of shape {} (numel 0) has no minimum or maximum",
                shape_string(self.sizes()));
  return {amin(self, std::nullopt, keepdim), amax(self, std::nullopt, keepdim)};
}

void check_orderable(const Tensor& self, const char* op) {
  ANATOMY_CHECK(self.dtype() != DType::Bool, TypeError, "{}: bool tensors have no order statistic", op);
}

// The value and index at sorted position `position` (keepdim shape, int64) along `d` of a
// tensor of at least one dim (Note [Order statistics through a stable sort]).
TwoTensors pick_sorted(const Tensor& self, int64_t d, const Tensor& position, bool keepdim) {
  Tensor order;
  {
    // The order carries no gradient: the sort runs below the autograd keys and records nothing.
    dispatch::ExcludeDispatchKeyGuard below_autograd(dispatch::kAutogradKeys);
    order = std::get<1>(sort(self, d));
  }
  Tensor indices = gather(order, d, position);
  Tensor values = gather(self, d, indices);
  if (!keepdim) return {values.squeeze(d), indices.squeeze(d)};
  return {values, indices};
}

// `position` for every row along `d`: an int64 tensor of self's shape with dim d of size 1.
Tensor same_position(const Tensor& self, int64_t d, int64_t position) {
  std::vector<int64_t> kept(self.sizes().begin(), self.sizes().end());
  kept[static_cast<size_t>(d)] = 1;
  return full(kept, Scalar(position), TensorOptions().dtype(DType::Int64).device(self.device()));
}

// The lower median's sorted position in each row; a row holding NaN gives its first NaN (NaN
// sorts last, so that is position n - count).
Tensor median_position(const Tensor& self, int64_t d) {
  const int64_t n = self.size(d);
  const Tensor lower = same_position(self, d, (n - 1) / 2);
  if (!is_floating(self.dtype())) return lower;
  const Tensor nan_count = isnan(self).sum(IntArrayRef{d}, true);
  return where(gt(nan_count, Scalar(0)), rsub(nan_count, Scalar(n)), lower);
}

TwoTensors median_dim_composite(const Tensor& self, int64_t dim, bool keepdim) {
  check_orderable(self, "median");
  const int64_t d = wrap_dim(dim, self.dim(), "median");
  if (self.dim() == 0) return {self.clone(), zeros({}, TensorOptions().dtype(DType::Int64).device(self.device()))};
  ANATOMY_CHECK(self.size(d) > 0, IndexError, "median: dim {} of a tensor of shape {} has no elements", dim,
                shape_string(self.sizes()));
  return pick_sorted(self, d, median_position(self, d), keepdim);
}

// Over every element: the lower median, NaN if any element is NaN; an empty floating tensor gives
// NaN, as in PyTorch, and an empty integer one raises (there is no integer NaN).
Tensor median_composite(const Tensor& self) {
  check_orderable(self, "median");
  if (self.numel() == 0) {
    ANATOMY_CHECK(is_floating(self.dtype()), ValueError,
                  "median: a {} tensor of shape {} has no elements and its dtype no NaN", name(self.dtype()),
                  shape_string(self.sizes()));
    return full({}, Scalar(std::numeric_limits<double>::quiet_NaN()), self.options());
  }
  return std::get<0>(median_dim_composite(self.reshape({-1}), 0, false));
}

// The k-th smallest (k from 1) along dim; NaN counts as larger than every number.
TwoTensors kthvalue_composite(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  check_orderable(self, "kthvalue");
  const int64_t d = wrap_dim(dim, self.dim(), "kthvalue");
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  ANATOMY_CHECK(k >= 1 && k <= n, IndexError, "kthvalue: k = {} is out of range for dim {} of size {} (shape {})", k,
                dim, n, shape_string(self.sizes()));
  if (self.dim() == 0) return {self.clone(), zeros({}, TensorOptions().dtype(DType::Int64).device(self.device()))};
  return pick_sorted(self, d, same_position(self, d, k - 1), keepdim);
}

// The sorted position of each row's answer (Note [mode as runs of a stable sort]), keepdim
// shape, int64; and the sort's order, from which the caller reads the index.
TwoTensors mode_position(const Tensor& self, int64_t d) {
  // Positions and counts carry no gradient: below the autograd keys nothing records.
  dispatch::ExcludeDispatchKeyGuard below_autograd(dispatch::kAutogradKeys);
  auto [sorted, order] = sort(self, d);
  const Tensor ids = run_ids(run_starts(sorted, d), d);
  const Tensor lengths = scatter_add(zeros_like(ids), d, ids, ones_like(ids));
  auto [longest, first] = max(gather(lengths, d, ids), d, /*keepdim=*/true);
  return {add(first, sub(longest, Scalar(1))), order};
}

TwoTensors mode_composite(const Tensor& self, int64_t dim, bool keepdim) {
  const int64_t d = wrap_dim(dim, self.dim(), "mode");
  if (self.dim() == 0) return {self.clone(), zeros({}, TensorOptions().dtype(DType::Int64).device(self.device()))};
  ANATOMY_CHECK(self.size(d) > 0, IndexError, "mode: dim {} of a tensor of shape {} has no elements", dim,
                shape_string(self.sizes()));
  const auto [position, order] = mode_position(self, d);
  Tensor indices = gather(order, d, position);
  Tensor values = gather(self, d, indices);
  if (!keepdim) return {values.squeeze(d), indices.squeeze(d)};
  return {values, indices};
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "var_mean.correction(Tensor self, int[1]? dim=None, float correction=1, bool keepdim=False) -> (Tensor, Tensor)",
      ANATOMY_KERNEL(var_mean_composite));
  m.def(
      "std_mean.correction(Tensor self, int[1]? dim=None, float correction=1, bool keepdim=False) -> (Tensor, Tensor)",
      ANATOMY_KERNEL(std_mean_composite));
  m.def("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        ANATOMY_KERNEL(nansum_composite));
  m.def("nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        ANATOMY_KERNEL(nanmean_composite));
  m.def("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
        ANATOMY_KERNEL(aminmax_composite));
  m.def("median(Tensor self) -> Tensor", ANATOMY_KERNEL(median_composite));
  m.def("median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
        ANATOMY_KERNEL(median_dim_composite));
  m.def("kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
        ANATOMY_KERNEL(kthvalue_composite));
  m.def("mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
        ANATOMY_KERNEL(mode_composite));
}

// ---- the C++ API ----
using VarMeanSig = TwoTensors(const Tensor&, OptionalIntArrayRef, double, bool);
using NanSig = Tensor(const Tensor&, OptionalIntArrayRef, bool, std::optional<DType>);

TwoTensors var_mean(const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim) {
  ANATOMY_OP(op, "aten::var_mean.correction", VarMeanSig);
  return op.call(self, dim, correction, keepdim);
}
TwoTensors std_mean(const Tensor& self, OptionalIntArrayRef dim, double correction, bool keepdim) {
  ANATOMY_OP(op, "aten::std_mean.correction", VarMeanSig);
  return op.call(self, dim, correction, keepdim);
}
Tensor nansum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::nansum", NanSig);
  return op.call(self, dim, keepdim, dtype);
}
Tensor nanmean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  ANATOMY_OP(op, "aten::nanmean", NanSig);
  return op.call(self, dim, keepdim, dtype);
}
TwoTensors aminmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  ANATOMY_OP(op, "aten::aminmax", TwoTensors(const Tensor&, std::optional<int64_t>, bool));
  return op.call(self, dim, keepdim);
}
Tensor median(const Tensor& self) {
  ANATOMY_OP(op, "aten::median", Tensor(const Tensor&));
  return op.call(self);
}
TwoTensors median(const Tensor& self, int64_t dim, bool keepdim) {
  ANATOMY_OP(op, "aten::median.dim", TwoTensors(const Tensor&, int64_t, bool));
  return op.call(self, dim, keepdim);
}
TwoTensors kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  ANATOMY_OP(op, "aten::kthvalue", TwoTensors(const Tensor&, int64_t, int64_t, bool));
  return op.call(self, k, dim, keepdim);
}
TwoTensors mode(const Tensor& self, int64_t dim, bool keepdim) {
  ANATOMY_OP(op, "aten::mode", TwoTensors(const Tensor&, int64_t, bool));
  return op.call(self, dim, keepdim);
}

// ---- methods ----
Tensor Tensor::nansum(OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) const {
  return anatomy::nansum(*this, dim, keepdim, dtype);
}
Tensor Tensor::nanmean(OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) const {
  return anatomy::nanmean(*this, dim, keepdim, dtype);
}
std::tuple<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> dim, bool keepdim) const {
  return anatomy::aminmax(*this, dim, keepdim);
}
Tensor Tensor::median() const { return anatomy::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const {
  return anatomy::median(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  return anatomy::kthvalue(*this, k, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::mode(int64_t dim, bool keepdim) const { return anatomy::mode(*this, dim, keepdim); }

}  // namespace anatomy
