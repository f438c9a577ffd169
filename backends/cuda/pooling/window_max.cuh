// The comparison max pooling's CUDA kernels share (pooling.cu, max_pool_nhwc.cu), as the CPU's
// loop makes it: a value replaces the best so far when it is greater or NaN, so NaN wins and, among
// equal values, the first in window order keeps the index.
//
// Device code only: included by .cu files.
#pragma once

#include <cmath>
#include <type_traits>

namespace anatomy::cuda {

template <typename A>
__device__ __forceinline__ bool takes_max(A v, A best) {
  if constexpr (std::is_floating_point_v<A>) return v > best || isnan(v);
  else return v > best;
}

}  // namespace anatomy::cuda
