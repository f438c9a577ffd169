// CPU: cumsum and cumprod along one dim, rows spread over threads.
//
// The input is first cast to the result dtype (scan_dtype: int64 for integer and bool inputs
// unless a dtype is given), as PyTorch does. The running value is kept in a wider type, as
// PyTorch's CPU kernels do: float for fp16/bf16, double for fp32 (each output is rounded once
// from it, so long rows do not drift), and for integers a uint64 whose wrapping arithmetic gives
// two's-complement results without signed-overflow UB.
#include <type_traits>

#include "anatomy/backends/cpu/row_walk.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/parallel.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy::cpu {
namespace {

template <typename T>
using Acc =
    std::conditional_t<is_reduced_float_v<T>, float, std::conditional_t<std::is_integral_v<T>, uint64_t, double>>;

template <typename T>
T from_acc(Acc<T> v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<int64_t>(v));
  else return convert<T>(v);
}

template <typename T>
Acc<T> to_acc(T v) {
  if constexpr (std::is_integral_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return static_cast<Acc<T>>(v);
}

template <bool Prod>
Tensor scan_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype, const char* op) {
  const int64_t d = shape::checked_dim(self, dim, op);
  const DType result = shape::scan_dtype(self.dtype(), dtype);
  const Tensor src = self.dtype() == result ? self : self.to(result);
  Tensor out = empty(self.sizes(), self.options().dtype(result));
  if (out.numel() == 0) return out;
  const Rows in = rows_along(src, d), o = rows_along(out, d);
  const int64_t n = in.length;
  visit_dtype(result, op, [&]<typename T>() {
    const T* s = static_cast<const T*>(src.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
    parallel_for(0, static_cast<int64_t>(in.starts.size()), grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* a = s + in.starts[r];
        T* b = dst + o.starts[r];
        Acc<T> acc = to_acc<T>(a[0]);
        b[0] = from_acc<T>(acc);
        for (int64_t i = 1; i < n; ++i) {
          if constexpr (Prod) acc = acc * to_acc<T>(a[i * in.stride]);
          else acc = acc + to_acc<T>(a[i * in.stride]);
          b[i * o.stride] = from_acc<T>(acc);
        }
      }
    });
  });
  return out;
}

Tensor cumsum_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_cpu<false>(self, dim, dtype, "cumsum");
}
Tensor cumprod_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_cpu<true>(self, dim, dtype, "cumprod");
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("cumsum", ANATOMY_KERNEL(cumsum_cpu));
  m.impl("cumprod", ANATOMY_KERNEL(cumprod_cpu));
}

}  // namespace anatomy::cpu
