// Counting values: unique, bincount and histc, written over sort, scans and accumulating
// index_put_ (CompositeImplicitAutograd, none of them differentiable: they run below the
// autograd keys, so nothing they call records a node). Every backend with those parts runs them; on CUDA the counts and
// sort run on the device and the result sizes are read on the host, which waits for it (as PyTorch does).
//
// Note [unique as a sort and segments]
// unique sorts the flattened values (stable), marks where each run of equal values starts
// (values[i] != values[i - 1]; NaN != NaN, so every NaN is its own value, as in PyTorch), and
// reads the runs' first values with masked_select. The running count of starts minus one is
// each sorted element's run, which scattered back through the sort's permutation is the
// inverse; the distances between consecutive starts are the counts. That is the sort-and-
// segment plan PyTorch's CUDA unique uses; no per-element atomics fight over one address.
//
// Note [unique of integers on CUDA]
// A radix sort's passes scale with the key's width (8 bits a pass), and the inverse's scatter
// through a permutation takes the sorted scatter's own sort (Note [Sorted scatter on CUDA]). So
// on CUDA, integers wider than a byte whose range (max - min, read with the one extra wait
// here) fits a narrower integer dtype are sorted as (x - min) in that dtype (uint8 or int32):
// 16M int64 values of 2^16 distinct ones take 4 passes of 4-byte keys instead of 8 of 8-byte. The inverse of integers
// is then a binary search of each element among the unique values (searchsorted): with no NaN, an element's run is the
// position of its value. The CPU keeps the plain plan, whose comparison sort and sequential scatter do not scale with
// key bits.
#include <cmath>
#include <cstdint>
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/local_key_set.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/print.h"
#include "anatomy/dispatch/ops/sorted_runs.h"

namespace anatomy {
namespace {

using ThreeTensors = std::tuple<Tensor, Tensor, Tensor>;

void check_values_known(const Tensor& self, const char* op) {
  ANATOMY_CHECK(self.device().type() != DeviceType::Meta, NotImplementedError,
                "{}: the result's size depends on the values, which a Meta tensor does not have", op);
}

// The values of a 1-d integer tensor in ascending order, sorted in the narrowest integer dtype
// that holds their range (Note [unique of integers on CUDA]).
Tensor sorted_integers(const Tensor& flat) {
  if (element_size(flat.dtype()) == 1) return std::get<0>(sort(flat, 0));
  const auto [low, high] = aminmax(flat);
  const Tensor bounds = stack({low, high}).to(kCPU, DType::Int64);
  const int64_t min = bounds.data_ptr<int64_t>()[0], max = bounds.data_ptr<int64_t>()[1];
  const uint64_t range = static_cast<uint64_t>(max) - static_cast<uint64_t>(min);
  const DType narrow = range <= UINT8_MAX ? DType::UInt8 : range <= INT32_MAX ? DType::Int32 : flat.dtype();
  if (element_size(narrow) >= element_size(flat.dtype())) return std::get<0>(sort(flat, 0));
  const Tensor sorted = std::get<0>(sort(sub(flat, Scalar(min)).to(narrow), 0));
  return add(sorted.to(flat.dtype()), Scalar(min));
}

// `sorted` is always honoured: a sort is how the values are found.
ThreeTensors unique_composite(const Tensor& self, bool /*sorted*/, bool return_inverse, bool return_counts) {
  check_values_known(self, "unique");
  dispatch::ExcludeDispatchKeyGuard below_autograd(dispatch::kAutogradKeys);
  const TensorOptions long_options = TensorOptions().dtype(DType::Int64).device(self.device());
  const Tensor flat = self.reshape({-1});
  const int64_t n = flat.numel();
  if (n == 0) {
    return {empty({0}, self.options()), return_inverse ? empty(self.sizes(), long_options) : empty({0}, long_options),
            empty({0}, long_options)};
  }
  const bool integers_on_cuda = self.device().is_cuda() && is_integral(self.dtype(), /*include_bool=*/false);
  Tensor values, order;  // order: the sort's permutation, kept for the scatter of the inverse
  if (integers_on_cuda) values = sorted_integers(flat);
  else std::tie(values, order) = sort(flat, 0);
  const Tensor starts = run_starts(values);
  const Tensor uniques = masked_select(values, starts);
  Tensor inverse = empty({0}, long_options);
  if (return_inverse) {
    inverse =
        integers_on_cuda ? searchsorted(uniques, flat) : scatter(empty({n}, long_options), 0, order, run_ids(starts));
    inverse = inverse.reshape(self.sizes());
  }
  Tensor counts = empty({0}, long_options);
  if (return_counts) {
    const Tensor first = nonzero(starts).reshape({-1});
    const int64_t k = first.numel();
    const Tensor ends = cat({first.narrow(0, 1, k - 1), full({1}, Scalar(n), long_options)});
    counts = sub(ends, first);
  }
  return {uniques, inverse, counts};
}

// counts[v] = how many elements equal v (or the sum of their weights), for v up to the largest
// element or minlength - 1.
Tensor bincount_composite(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  check_values_known(self, "bincount");
  dispatch::ExcludeDispatchKeyGuard below_autograd(dispatch::kAutogradKeys);
  ANATOMY_CHECK(is_integral(self.dtype(), /*include_bool=*/false), TypeError,
                "bincount: expected an integer input, got {}", name(self.dtype()));
  ANATOMY_CHECK(self.dim() == 1, ValueError, "bincount: expected a 1-d input, got shape {}",
                shape_string(self.sizes()));
  ANATOMY_CHECK(minlength >= 0, ValueError, "bincount: minlength must be >= 0, got {}", minlength);
  const bool weighted = weights.has_value() && weights->defined();
  if (weighted) {
    ANATOMY_CHECK(weights->dim() == 1 && weights->size(0) == self.size(0), ValueError,
                  "bincount: weights of shape {} for an input of shape {} (expected the same 1-d shape)",
                  shape_string(weights->sizes()), shape_string(self.sizes()));
    ANATOMY_CHECK(weights->device() == self.device(), DeviceError, "bincount: weights on {} for an input on {}",
                  weights->device().str(), self.device().str());
  }
  // Floating weights keep their dtype; other weights count in fp64, as PyTorch's do.
  const DType result = !weighted ? DType::Int64 : is_floating(weights->dtype()) ? weights->dtype() : DType::Float64;
  int64_t length = minlength;
  const Tensor index = self.to(DType::Int64);
  if (self.numel() > 0) {
    const int64_t lowest = index.min().item<int64_t>();
    ANATOMY_CHECK(lowest >= 0, ValueError, "bincount: the input holds a negative value ({})", lowest);
    length = std::max(length, index.max().item<int64_t>() + 1);
  }
  const TensorOptions options = TensorOptions().dtype(result).device(self.device());
  Tensor out = zeros({length}, options);
  if (self.numel() == 0) return out;
  const Tensor added = weighted ? weights->to(result) : ones({self.numel()}, options);
  naming_errors("bincount", [&] { index_put_(out, {index}, added, /*accumulate=*/true); });
  return out;
}

// A histogram of `bins` equal bins over [min, max] (both ends included: max goes in the last
// bin); elements outside, and NaN, are not counted. min == max takes the input's own range (and
// widens an empty range to [min - 1, max + 1]). Bins are found in fp64 whatever the dtype.
Tensor histc_composite(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  ANATOMY_CHECK(is_floating(self.dtype()), TypeError, "histc: expected a floating input, got {}", name(self.dtype()));
  dispatch::ExcludeDispatchKeyGuard below_autograd(dispatch::kAutogradKeys);
  ANATOMY_CHECK(bins > 0, ValueError, "histc: bins must be > 0, got {}", bins);
  double lo = min.to<double>();
  double hi = max.to<double>();
  if (self.device().type() == DeviceType::Meta) return empty({bins}, self.options());
  const Tensor x = self.reshape({-1}).to(DType::Float64);
  if (lo == hi && x.numel() > 0) {
    lo = x.min().item<double>();
    hi = x.max().item<double>();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  ANATOMY_CHECK(std::isfinite(lo) && std::isfinite(hi), ValueError, "histc: the range [{}, {}] is not finite", lo, hi);
  ANATOMY_CHECK(lo < hi, ValueError, "histc: max ({}) must be larger than min ({})", hi, lo);
  Tensor out = zeros({bins}, self.options());
  if (x.numel() == 0) return out;
  const Tensor inside = logical_and(ge(x, Scalar(lo)), le(x, Scalar(hi)));
  const Tensor position = floor(div(mul(sub(x, Scalar(lo)), Scalar(static_cast<double>(bins))), Scalar(hi - lo)));
  const Tensor bin = where(inside, clamp(position, Scalar(0), Scalar(static_cast<double>(bins - 1))), Scalar(0));
  index_put_(out, {bin.to(DType::Int64)}, inside.to(self.dtype()), /*accumulate=*/true);
  return out;
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, "
      "Tensor, Tensor)",
      ANATOMY_KERNEL(unique_composite));
  m.def("bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor", ANATOMY_KERNEL(bincount_composite));
  m.def("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor", ANATOMY_KERNEL(histc_composite));
}

// ---- the C++ API ----
ThreeTensors unique(const Tensor& self, bool sorted, bool return_inverse, bool return_counts) {
  ANATOMY_OP(op, "aten::_unique2", ThreeTensors(const Tensor&, bool, bool, bool));
  return op.call(self, sorted, return_inverse, return_counts);
}
Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  ANATOMY_OP(op, "aten::bincount", Tensor(const Tensor&, const std::optional<Tensor>&, int64_t));
  return op.call(self, weights, minlength);
}
Tensor histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  ANATOMY_OP(op, "aten::histc", Tensor(const Tensor&, int64_t, const Scalar&, const Scalar&));
  return op.call(self, bins, min, max);
}

}  // namespace anatomy
