// Registers a backend's sort and topk from its one row-selection function, so the checks and
// the results' shapes and dtypes live here once and each backend writes only the ordering (the
// Meta backend's selection does nothing).
//
//   Select(self, dim, k, descending, sorted, values, indices, op): writes the first k elements of
//   each row along `dim` in the stable order (NaN largest; ties in input order) into the fresh
//   values / int64 indices; `sorted` false (topk only) wants those k in index order. Called only
//   when the results have elements.
#pragma once

#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy::dispatch {

using SelectRows = void (*)(const Tensor& self, int64_t dim, int64_t k, bool descending, bool sorted,
                            const Tensor& values, const Tensor& indices, const char* op);

template <SelectRows Select>
struct SortKernels {
  static std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
    const int64_t d = shape::checked_dim(self, dim, "sort");
    Tensor values = empty(self.sizes(), self.options());
    Tensor indices = empty(self.sizes(), self.options().dtype(DType::Int64));
    if (self.numel() > 0) Select(self, d, shape::size_along(self, d), descending, true, values, indices, "sort");
    return {values, indices};
  }
  static std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
    const int64_t d = shape::checked_dim(self, dim, "topk");
    shape::check_topk(self, k, d);
    const DimVector sizes = shape::topk_shape(self, k, d);
    Tensor values = empty(sizes, self.options());
    Tensor indices = empty(sizes, self.options().dtype(DType::Int64));
    if (values.numel() > 0) Select(self, d, k, /*descending=*/largest, sorted, values, indices, "topk");
    return {values, indices};
  }
};

template <SelectRows Select>
void register_sort_kernels(Library& m) {
  using K = SortKernels<Select>;
  m.impl("sort", named_kernel(&K::sort, "sort"));
  m.impl("topk", named_kernel(&K::topk, "topk"));
}

}  // namespace anatomy::dispatch
