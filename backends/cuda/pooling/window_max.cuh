// Internal to pooling/: included by the room's own files only (its launcher header is launch.h).
// What max pooling's CUDA kernels share (pooling.cu, max_pool_nhwc.cu): the comparison, as the
// CPU's loop makes it (a value replaces the best so far when it is greater or NaN, so NaN wins and,
// among equal values, the first in window order keeps the index), and the value a search starts
// from.
//
// Included by .cu files only.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

namespace anatomy::cuda {

template <typename A>
__device__ __forceinline__ bool takes_max(A v, A best) {
  if constexpr (std::is_floating_point_v<A>) return v > best || isnan(v);
  else return v > best;
}

// Below every value, where a window's search for its maximum starts (the launchers pass it to the
// kernels): -inf for the floating types, the smallest integer otherwise.
template <typename A>
A below_every_value() {
  return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
}

}  // namespace anatomy::cuda
