// Runs of equal values in a sorted tensor, the step unique, isin and mode share: each sorts, then
// finds where each run of equal values begins and numbers the runs.
#pragma once

#include "anatomy/dispatch/ops.h"

namespace anatomy {

// starts is true where a run begins along `dim`: at 0, and wherever sorted[i] != sorted[i - 1]
// (NaN is unequal to everything, so every NaN is a run of its own). `sorted` is sorted along
// `dim`, which has at least one element.
inline Tensor run_starts(const Tensor& sorted, int64_t dim = 0) {
  const int64_t n = sorted.size(dim);
  DimVector first(sorted.sizes());
  first[static_cast<size_t>(dim)] = 1;
  return cat({ones(first, TensorOptions().dtype(DType::Bool).device(sorted.device())),
              ne(sorted.narrow(dim, 1, n - 1), sorted.narrow(dim, 0, n - 1))},
             dim);
}

// Each element's run along `dim`, numbered from 0 (int64).
inline Tensor run_ids(const Tensor& starts, int64_t dim = 0) {
  return sub(cumsum(starts, dim, DType::Int64), Scalar(1));
}

}  // namespace anatomy
