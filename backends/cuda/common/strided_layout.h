// StridedLayout<N>: the shape and the strides of N operands that a strided kernel walks,
// passed to the kernel by value (kernel parameters travel with the launch: no device
// allocation, no copy). Element i, in row-major order of the shape, sits at offsets(i)[k]
// elements from operand k's first element; indices are 64-bit throughout.
//
// This header is compiled by nvcc as well as the host compiler, so it includes nothing that
// needs fmt or the rest of core. make_strided_layout.h builds one from tensors.
#pragma once

#include <cstdint>

#include "anatomy/core/macros.h"

namespace anatomy::cuda {

// As in PyTorch. 25 dims of two operands are 608 bytes of parameters (the limit is 4 KB).
inline constexpr int kMaxDims = 25;

template <int N>
struct StridedLayout {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];  // in elements

  ANATOMY_HOST_DEVICE void offsets(int64_t i, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    // Peel the index from the innermost dim outwards, like digits of a mixed-radix number.
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t idx = i % sizes[d];
      i /= sizes[d];
      for (int k = 0; k < N; ++k) out[k] += idx * strides[k][d];
    }
  }
};

}  // namespace anatomy::cuda
