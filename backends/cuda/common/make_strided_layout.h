// Building a StridedLayout from tensor sizes and strides (host side). Dims of size 1 are
// dropped and neighbouring dims that are contiguous with each other in every operand are merged,
// so most layouts reach the kernel with one to three dims and the index math stays cheap.
#pragma once

#include <array>
#include <vector>

#include "anatomy/backends/cuda/common/strided_layout.h"
#include "anatomy/core/dim_vector.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {

// NotImplementedError naming `op` when more than kMaxDims dims remain after merging.
template <int N>
StridedLayout<N> make_strided_layout(IntArrayRef sizes, const std::array<IntArrayRef, N>& strides, const char* op) {
  std::vector<int64_t> merged_sizes;
  std::array<std::vector<int64_t>, N> merged_strides;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool mergeable = !merged_sizes.empty();
    for (int k = 0; k < N && mergeable; ++k) mergeable = merged_strides[k].back() == strides[k][d] * sizes[d];
    if (mergeable) {
      // The outer dim (already kept) steps exactly over this one: one dim of the product's size.
      merged_sizes.back() *= sizes[d];
      for (int k = 0; k < N; ++k) merged_strides[k].back() = strides[k][d];
      continue;
    }
    merged_sizes.push_back(sizes[d]);
    for (int k = 0; k < N; ++k) merged_strides[k].push_back(strides[k][d]);
  }
  ANATOMY_CHECK(merged_sizes.size() <= static_cast<size_t>(kMaxDims), NotImplementedError,
                "{}: the CUDA kernels take at most {} dims after merging contiguous ones, got {} (sizes [{}])", op,
                kMaxDims, merged_sizes.size(), fmt::join(sizes, ", "));
  StridedLayout<N> layout;
  layout.ndim = static_cast<int>(merged_sizes.size());
  for (int d = 0; d < layout.ndim; ++d) {
    layout.sizes[d] = merged_sizes[d];
    for (int k = 0; k < N; ++k) layout.strides[k][d] = merged_strides[k][d];
  }
  return layout;
}

}  // namespace anatomy::cuda
