// CUDA: sort (stable, both directions) and topk. The checks and result shapes are every
// backend's (dispatch/ops/sort_registration.h), the order the CPU's (backends/cpu/sort_cpu.cpp: NaN
// largest, -0.0 equal to +0.0, ties in input order, topk's ties to the lower index, sorted=false
// in index order). The rows along `dim` are read in place, whatever the strides; sort.cu holds
// the keys, the CUB sorts and the gather. The outputs are fresh contiguous tensors, as on the
// CPU. Nothing here waits for the device.
#include <climits>

#include "anatomy/backends/cuda/common/cub_temp.h"
#include "anatomy/backends/cuda/common/make_strided_layout.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/sort/launch.h"
#include "anatomy/dispatch/ops/sort_registration.h"

namespace anatomy::cuda {
namespace {

// Writes the first `k` of each row's order along `dim` (all of it for sort) into values/indices.
void select_rows(const Tensor& self, int64_t dim, int64_t k, bool descending, bool sorted, const Tensor& values,
                 const Tensor& indices, const char* op) {
  const int64_t n = shape::size_along(self, dim);
  ANATOMY_CHECK(n <= INT32_MAX, NotImplementedError, "{}: CUDA sorts rows of at most {} elements, got {} along dim {}",
                op, INT32_MAX, n, dim);
  SortRows q;
  q.dtype = self.dtype();
  q.in = self.data_ptr();
  q.values = values.data_ptr();
  q.indices = static_cast<int64_t*>(indices.data_ptr());
  q.rows = self.numel() / n;
  q.n = n;
  q.k = k;
  q.descending = descending;
  q.sorted = sorted;
  DimVector sizes, in_strides, out_strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == dim) {
      q.in_stride = self.strides()[d];
      q.out_stride = values.strides()[d];
      continue;
    }
    sizes.push_back(self.sizes()[d]);
    in_strides.push_back(self.strides()[d]);
    out_strides.push_back(values.strides()[d]);
  }
  q.starts = make_strided_layout<2>(sizes, {IntArrayRef(in_strides), IntArrayRef(out_strides)}, op);

  DeviceGuard guard(self.device());
  ScratchBlocks scratch(self.device());  // freed when this returns: safe on one stream (cub_temp.h)
  const bool launched =
      small_topk_fits(q) ? launch_topk_small(q, current_stream()) : launch_sort_rows(q, scratch.fn(), current_stream());
  ANATOMY_CHECK(launched, NotImplementedError, "{}: CUDA takes no {} input", op, name(self.dtype()));
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { dispatch::register_sort_kernels<&select_rows>(m); }

}  // namespace anatomy::cuda
