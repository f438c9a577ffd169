// Runs of equal values in a sorted 1-d tensor, the step unique and isin share: both sort, then
// find where each run of equal values begins and number the runs.
#pragma once

#include "anatomy/dispatch/ops.h"

namespace anatomy {

// starts[i] is true where a run begins: at 0, and wherever sorted[i] != sorted[i - 1] (NaN is
// unequal to everything, so every NaN is a run of its own). `sorted` has at least one element.
inline Tensor run_starts(const Tensor& sorted) {
  const int64_t n = sorted.numel();
  return cat({ones({1}, TensorOptions().dtype(DType::Bool).device(sorted.device())),
              ne(sorted.narrow(0, 1, n - 1), sorted.narrow(0, 0, n - 1))});
}

// Each element's run, numbered from 0 (int64).
inline Tensor run_ids(const Tensor& starts) { return sub(cumsum(starts, 0, DType::Int64), Scalar(1)); }

}  // namespace anatomy
