// strided_offsets: StridedLayout::offsets with the common cases taken first. make_strided_layout
// merges the dims of a dense operand into one, so most layouts reach a kernel with zero or one
// dim; there the offsets are a product, not the 64-bit division of the general walk.
//
// Device code only: included by .cu files.
#pragma once

#include <cstdint>

#include "anatomy/backends/cuda/common/strided_layout.h"

namespace anatomy::cuda {

template <int N>
__device__ __forceinline__ void strided_offsets(const StridedLayout<N>& layout, int64_t i, int64_t (&out)[N]) {
  if (layout.ndim == 0) {
    for (int k = 0; k < N; ++k) out[k] = 0;
  } else if (layout.ndim == 1) {
    for (int k = 0; k < N; ++k) out[k] = i * layout.strides[k][0];
  } else {
    layout.offsets(i, out);
  }
}

}  // namespace anatomy::cuda
