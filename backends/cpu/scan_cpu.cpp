// CPU: cumsum, cumprod and logcumsumexp along one dim, rows spread over threads.
//
// cumsum and cumprod first cast the input to the result dtype (scan_dtype: int64 for integer and
// bool inputs unless a dtype is given), as PyTorch does; logcumsumexp takes floating inputs only.
// The running value and each step are the shared ones (dispatch/ops/scan_functors.h: float for
// fp16/bf16, double for fp32, wrapping uint64 for integers), so CUDA computes the same values.
#include "anatomy/backends/cpu/row_walk.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/parallel.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/scan_functors.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy::cpu {
namespace {

// Scans `src` (already of the result dtype) into a fresh tensor of its shape and dtype.
template <typename Op>
Tensor scan_rows(const Tensor& src, int64_t d, const char* op) {
  Tensor out = empty(src.sizes(), src.options());
  if (out.numel() == 0) return out;
  const Rows in = rows_along(src, d), o = rows_along(out, d);
  const int64_t n = in.length;
  visit_dtype(src.dtype(), op, [&]<typename T>() {
    if constexpr (Op::template takes_v<T>) {
      using scan::from_scan_acc, scan::to_scan_acc;
      const Op combine;
      const T* s = static_cast<const T*>(src.data_ptr());
      T* dst = static_cast<T*>(out.data_ptr());
      const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
      parallel_for(0, static_cast<int64_t>(in.starts.size()), grain, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const T* a = s + in.starts[r];
          T* b = dst + o.starts[r];
          scan::scan_acc_t<T> acc = to_scan_acc<T>(a[0]);
          b[0] = from_scan_acc<T>(acc);
          for (int64_t i = 1; i < n; ++i) {
            acc = combine(acc, to_scan_acc<T>(a[i * in.stride]));
            b[i * o.stride] = from_scan_acc<T>(acc);
          }
        }
      });
    } else {
      ANATOMY_THROW(TypeError, "{}: unsupported dtype {}", op, name(src.dtype()));
    }
  });
  return out;
}

template <typename Op>
Tensor cast_and_scan(const Tensor& self, int64_t dim, std::optional<DType> dtype, const char* op) {
  const int64_t d = shape::checked_dim(self, dim, op);
  const DType result = shape::scan_dtype(self.dtype(), dtype);
  return scan_rows<Op>(self.dtype() == result ? self : self.to(result), d, op);
}

Tensor cumsum_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return cast_and_scan<scan::SumOp>(self, dim, dtype, "cumsum");
}
Tensor cumprod_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return cast_and_scan<scan::ProdOp>(self, dim, dtype, "cumprod");
}
Tensor logcumsumexp_cpu(const Tensor& self, int64_t dim) {
  const int64_t d = shape::checked_dim(self, dim, "logcumsumexp");
  shape::check_floating_scan(self, "logcumsumexp");
  return scan_rows<scan::LogAddExpOp>(self, d, "logcumsumexp");
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("cumsum", ANATOMY_KERNEL(cumsum_cpu));
  m.impl("cumprod", ANATOMY_KERNEL(cumprod_cpu));
  m.impl("logcumsumexp", ANATOMY_KERNEL(logcumsumexp_cpu));
}

}  // namespace anatomy::cpu
