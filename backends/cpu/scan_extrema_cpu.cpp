// CPU: cummax and cummin along one dim, rows spread over threads: each row walked once, the
// running (value, index) pair combined with each element by the rule CUDA uses too
// (scan::ExtremumOp in dispatch/ops/scan_functors.h: ties take the latest index, NaN sticks).
#include "anatomy/backends/cpu/row_walk.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/parallel.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/scan_functors.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy::cpu {
namespace {

template <bool IsMax>
std::tuple<Tensor, Tensor> cum_extremum_cpu(const Tensor& self, int64_t dim, const char* op) {
  const int64_t d = shape::checked_dim(self, dim, op);
  Tensor values = empty(self.sizes(), self.options());
  Tensor indices = empty(self.sizes(), self.options().dtype(DType::Int64));
  if (self.numel() == 0) return {values, indices};
  // values and indices are both fresh and contiguous: one walk serves both.
  const Rows in = rows_along(self, d), o = rows_along(values, d);
  const int64_t n = in.length;
  visit_dtype(self.dtype(), op, [&]<typename T>() {
    const scan::ExtremumOp<IsMax> combine;
    const T* s = static_cast<const T*>(self.data_ptr());
    T* vals = static_cast<T*>(values.data_ptr());
    int64_t* idx = static_cast<int64_t*>(indices.data_ptr());
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
    parallel_for(0, static_cast<int64_t>(in.starts.size()), grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* a = s + in.starts[r];
        scan::ValueIndex<T> acc = scan::value_index(a[0], 0);
        for (int64_t i = 0; i < n; ++i) {
          if (i > 0) acc = combine(acc, scan::value_index(a[i * in.stride], i));
          vals[o.starts[r] + i * o.stride] = convert<T>(acc.value);
          idx[o.starts[r] + i * o.stride] = acc.index;
        }
      }
    });
  });
  return {values, indices};
}

std::tuple<Tensor, Tensor> cummax_cpu(const Tensor& self, int64_t dim) {
  return cum_extremum_cpu<true>(self, dim, "cummax");
}
std::tuple<Tensor, Tensor> cummin_cpu(const Tensor& self, int64_t dim) {
  return cum_extremum_cpu<false>(self, dim, "cummin");
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("cummax", ANATOMY_KERNEL(cummax_cpu));
  m.impl("cummin", ANATOMY_KERNEL(cummin_cpu));
}

}  // namespace anatomy::cpu
