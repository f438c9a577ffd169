// The binary search of searchsorted and bucketize, written once for the CPU loop and the CUDA
// kernel. No fmt here: .cu files include it.
//
// Note [NaN in searchsorted]
// The search orders values as sort does: NaN after every number, NaN equal to NaN (numpy's
// searchsorted does the same). For a sequence without NaN this is PyTorch's search exactly: its
// comparisons, !(s >= v) and !(s > v), put a NaN value at the end, and so does this order. For a
// sequence holding NaN (sorted last, as sort leaves it) PyTorch's answer depends on where its
// bisection happens to probe ([1, 2, 3, NaN, NaN, NaN, NaN] gives 7 for 1.5); here it is the
// position among the numbers, and a NaN value lands at the first NaN (side left) or the end.
#pragma once

#include <cstdint>

#include "anatomy/core/macros.h"
#include "anatomy/dispatch/ops/elementwise_scalar.h"

namespace anatomy::search {

// a < b with NaN after every number (x != x only for NaN; integers never are).
template <typename M>
ANATOMY_HOST_DEVICE bool less_nan_last(M a, M b) {
  return !(a != a) && ((b != b) || a < b);
}

// The position in [0, n] of `v` among the n elements at(0) .. at(n - 1), sorted ascending:
//   left  (right == false): the first i with at(i) >= v (numpy's side='left');
//   right (right == true):  the first i with at(i) > v.
// fp16 and bf16 compare as float.
template <typename T, typename At>
ANATOMY_HOST_DEVICE int64_t sorted_position(T v, int64_t n, bool right, const At& at) {
  using M = elementwise::opmath_t<T>;
  const M x = static_cast<M>(v);
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    const M m = static_cast<M>(at(mid));
    const bool before = right ? !less_nan_last(x, m) : less_nan_last(m, x);
    if (before) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace anatomy::search
