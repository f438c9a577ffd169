// Walking the elements of one or more tensors with the same shape and arbitrary strides.
//
// The N-dimensional index advances like an odometer; the innermost dimension is a plain loop
// with constant strides, which is where the time goes. This is the simple strided walk used by
// copies, fills and printing; the element-wise iteration plan (coalescing, vectorized paths)
// builds on the same idea.
#pragma once

#include <array>
#include <cstdint>

#include "anatomy/core/dim_vector.h"

namespace anatomy {

// Calls fn(offsets) for every index of `sizes`, where offsets[k] is the element offset of
// operand k (strides in elements, one stride list per operand).
template <size_t N, typename F>
void for_each_strided(IntArrayRef sizes, const std::array<IntArrayRef, N>& strides, F&& fn) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0) return;
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  std::array<int64_t, N> offsets{};
  if (ndim == 0) {
    fn(offsets);
    return;
  }
  DimVector index(sizes.size(), 0);
  const int64_t inner = sizes[ndim - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][ndim - 1];
  for (int64_t done = 0; done < numel; done += inner) {
    std::array<int64_t, N> o = offsets;
    for (int64_t i = 0; i < inner; ++i) {
      fn(o);
      for (size_t k = 0; k < N; ++k) o[k] += inner_stride[k];
    }
    // Carry into the outer dims.
    for (int64_t d = ndim - 2; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k) offsets[k] += strides[k][d];
      if (++index[d] < sizes[d]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= strides[k][d] * sizes[d];
      index[d] = 0;
    }
  }
}

}  // namespace anatomy
