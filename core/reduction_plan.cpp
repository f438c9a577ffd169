// The reduction plan (Note [Reduction plan]).
#include "anatomy/core/reduction_plan.h"

#include <algorithm>

namespace anatomy {

ReductionPlan::ReductionPlan(const char* op, const Tensor& self, OptionalIntArrayRef dims, bool keepdim, bool ordered)
    : op_(op) {
  const int64_t ndim = self.dim();
  ANATOMY_CHECK(ndim <= 64, ValueError, "{}: at most 64 dims, got {}", op, ndim);
  if (!dims) {
    mask_ = ndim == 64 ? ~uint64_t{0} : (uint64_t{1} << ndim) - 1;
  } else {
    for (int64_t d : *dims) {
      const int64_t w = wrap_dim(d, ndim, op);
      ANATOMY_CHECK(!((mask_ >> w) & 1), ValueError, "{}: dim {} appears multiple times in the list of dims", op, w);
      mask_ |= uint64_t{1} << w;
    }
  }
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
  // A result whose memory is row-major gets row-major strides on its size-1 dims too, as
  // PyTorch's contiguous result: x_channels_last.sum({2, 3}, keepdim) is (C, 1, 1, 1), not
  // (C, 1, C, C), so that it does not suggest channels_last.
  if (compute_contiguous(result_shape_, result_strides_)) result_strides_ = contiguous_strides(result_shape_);
}

}  // namespace anatomy
