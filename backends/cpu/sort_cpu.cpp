// CPU: sort (stable) and topk, row by row along `dim`, rows spread over threads.
//
// Ordering, as PyTorch's: NaN is larger than every number (last ascending, first descending);
// equal values (-0.0 and +0.0 included) keep their input order in both directions. topk picks
// the first k elements of that same stable order, so among ties the lower index wins.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <utility>

#include "anatomy/backends/cpu/row_walk.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/parallel.h"
#include "anatomy/dispatch/ops/sort_registration.h"

namespace anatomy::cpu {
namespace {

// The type values are compared in: fp16 and bf16 through float (exact), others as themselves.
template <typename T>
using Key = std::conditional_t<is_reduced_float_v<T>, float, T>;

// a < b with NaN largest.
template <typename K>
bool less_nan_last(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    return a < b || (!std::isnan(a) && std::isnan(b));
  } else {
    return a < b;
  }
}

// Whether a comes strictly before b in the requested direction.
template <typename K>
bool before(K a, K b, bool descending) {
  return descending ? less_nan_last(b, a) : less_nan_last(a, b);
}

// Rows of at least this many elements each make one parallel range worth handing out.
int64_t row_grain(int64_t length) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(length, 1)); }

// Sorts each row of `self` along `dim` and writes the first `k` of each row (all of it for sort)
// into values/indices. `sorted` false (topk only) writes the k picked elements in index order.
void select_rows(const Tensor& self, int64_t dim, int64_t k, bool descending, bool sorted, const Tensor& values,
                 const Tensor& indices, const char* op) {
  const Rows in = rows_along(self, dim), vo = rows_along(values, dim), io = rows_along(indices, dim);
  const int64_t n = in.length;
  visit_dtype(self.dtype(), op, [&]<typename T>() {
    using K = Key<T>;
    const T* src = static_cast<const T*>(self.data_ptr());
    T* vdst = static_cast<T*>(values.data_ptr());
    int64_t* idst = static_cast<int64_t*>(indices.data_ptr());
    const int64_t nrows = static_cast<int64_t>(in.starts.size());
    parallel_for(0, nrows, row_grain(n), [&](int64_t r0, int64_t r1) {
      std::vector<std::pair<K, int64_t>> row(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        const T* s = src + in.starts[r];
        for (int64_t i = 0; i < n; ++i) row[i] = {static_cast<K>(s[i * in.stride]), i};
        if (k == n) {
          std::stable_sort(row.begin(), row.end(),
                           [&](const auto& a, const auto& b) { return before(a.first, b.first, descending); });
        } else {
          // Ties broken by index make the order total, so this picks the stable order's prefix.
          auto total = [&](const auto& a, const auto& b) {
            if (before(a.first, b.first, descending)) return true;
            if (before(b.first, a.first, descending)) return false;
            return a.second < b.second;
          };
          std::partial_sort(row.begin(), row.begin() + k, row.end(), total);
        }
        if (!sorted) {
          std::sort(row.begin(), row.begin() + k, [](const auto& a, const auto& b) { return a.second < b.second; });
        }
        T* v = vdst + vo.starts[r];
        int64_t* ix = idst + io.starts[r];
        for (int64_t j = 0; j < k; ++j) {
          v[j * vo.stride] = s[row[j].second * in.stride];
          ix[j * io.stride] = row[j].second;
        }
      }
    });
  });
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { dispatch::register_sort_kernels<&select_rows>(m); }

}  // namespace anatomy::cpu
