// One strided run: a tensor whose elements, in row-major order of its shape, sit at
// data + i * stride (a contiguous tensor, a slice with a step, a 1-D view, a broadcast scalar).
// CUB's device algorithms take their inputs as iterators that they copy for every item, so the
// ops that feed tensors to CUB (select_cuda.cpp, one_hot_cuda.cpp) read them through a pointer
// and one stride rather than a whole StridedLayout, and copy any other layout once first.
#pragma once

#include <optional>

#include "anatomy/core/tensor.h"

namespace anatomy::cuda {

// The stride of the one run that `sizes` and `strides` describe, or nullopt when they are not
// one run. Size-1 dims are ignored; a tensor of at most one element has stride 0.
inline std::optional<int64_t> strided_run(IntArrayRef sizes, IntArrayRef strides) {
  std::optional<int64_t> stride;
  int64_t next = 0;  // the stride the next outer dim needs to continue the run
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (stride && strides[d] != next) return std::nullopt;
    if (!stride) stride = strides[d];
    next = strides[d] * sizes[d];
  }
  return stride.value_or(0);
}

// t itself with its run's stride, or a contiguous copy of it (stride 1).
struct StridedRun {
  Tensor tensor;
  int64_t stride = 1;
};
inline StridedRun as_strided_run(const Tensor& t) {
  if (const std::optional<int64_t> s = strided_run(t.sizes(), t.strides())) return {t, *s};
  return {t.contiguous(), 1};
}

}  // namespace anatomy::cuda
