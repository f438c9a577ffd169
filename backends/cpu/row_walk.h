// Walking a tensor row by row along one dim, for the kernels that work on whole rows at a time
// (sort, topk, cumsum, cumprod): the offset where each row starts, for the input and the output,
// so rows can be handed to threads independently.
#pragma once

#include <vector>

#include "anatomy/core/strided_loop.h"
#include "anatomy/core/tensor.h"

namespace anatomy::cpu {

struct Rows {
  int64_t length = 1;           // elements per row (the size of dim)
  int64_t stride = 1;           // the stride along dim, in elements
  std::vector<int64_t> starts;  // element offset of each row's first element
};

// The rows of `t` along `dim`, in row-major order of the other dims. A 0-dim tensor is one row
// of one element.
inline Rows rows_along(const Tensor& t, int64_t dim) {
  Rows r;
  if (t.dim() == 0) {
    r.starts = {0};
    return r;
  }
  r.length = t.sizes()[dim];
  r.stride = t.strides()[dim];
  DimVector sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == dim) continue;
    sizes.push_back(t.sizes()[d]);
    strides.push_back(t.strides()[d]);
  }
  for_each_strided<1>(sizes, {IntArrayRef(strides)},
                      [&](const std::array<int64_t, 1>& o) { r.starts.push_back(o[0]); });
  return r;
}

}  // namespace anatomy::cpu
