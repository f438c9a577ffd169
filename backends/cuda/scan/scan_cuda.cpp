// CUDA: cumsum, cumprod, logcumsumexp, cummax and cummin along one dim. The CPU's plan
// (scan_cpu.cpp, scan_extrema_cpu.cpp): the dim and dtype checked and the result dtype chosen by
// the shared rules (shape::checked_dim, shape::scan_dtype, shape::check_floating_scan), cumsum's
// and cumprod's input cast to the result dtype first, fresh contiguous results; the kernels,
// their accumulation types and the tiles of a few long rows are in scan_kernels.cuh. Nothing
// waits.
#include "anatomy/backends/cuda/common/make_strided_layout.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/scan/launch.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy::cuda {
namespace {

// Scans the rows of `src` along d into `values` (and, for Max and Min, `indices`): fresh,
// contiguous, non-empty tensors of src's shape.
void scan_into(ScanKind kind, const Tensor& src, int64_t d, const Tensor& values, const Tensor& indices,
               const char* op) {
  DeviceGuard guard(values.device());
  // The rows along d; a 0-dim tensor is one row of one element.
  ScanRows rows;
  rows.length = 1;
  DimVector other_sizes, in_strides, out_strides;
  for (int64_t k = 0; k < src.dim(); ++k) {
    if (k == d) {
      rows.length = src.sizes()[k];
      rows.in_stride = src.strides()[k];
      rows.out_stride = values.strides()[k];
      continue;
    }
    other_sizes.push_back(src.sizes()[k]);
    in_strides.push_back(src.strides()[k]);
    out_strides.push_back(values.strides()[k]);
  }
  rows.rows = make_strided_layout<2>(other_sizes, {in_strides, out_strides}, op);
  rows.num_rows = values.numel() / rows.length;
  // The results are contiguous: their rows are contiguous exactly when every dim after d has size 1.
  const bool innermost = src.dim() == 0 || rows.out_stride == 1;
  // The totals of a tiled scan (Note [Tiled scans], scan_kernels.cuh); freed once the kernels are
  // queued, which is safe on one stream (cub_temp.h).
  const size_t scratch_bytes = scan_scratch_bytes(kind, src.dtype(), rows, innermost);
  const Tensor scratch = scratch_bytes == 0 ? Tensor()
                                            : empty({static_cast<int64_t>(scratch_bytes)},
                                                    TensorOptions().dtype(DType::UInt8).device(values.device()));
  const ScanOut out{values.data_ptr(), indices.defined() ? static_cast<int64_t*>(indices.data_ptr()) : nullptr};
  const bool launched = launch_scan(kind, src.dtype(), src.data_ptr(), out, rows, innermost,
                                    scratch.defined() ? scratch.data_ptr() : nullptr, current_stream());
  ANATOMY_CHECK(launched, TypeError, "{}: no CUDA kernel for dtype {}", op, name(src.dtype()));
}

// A scan with one result, of src's dtype.
Tensor fold(ScanKind kind, const Tensor& src, int64_t d, const char* op) {
  Tensor out = empty(src.sizes(), src.options());
  if (out.numel() > 0) scan_into(kind, src, d, out, Tensor(), op);
  return out;
}

template <ScanKind Kind>
Tensor cast_and_fold(const Tensor& self, int64_t dim, std::optional<DType> dtype, const char* op) {
  const int64_t d = shape::checked_dim(self, dim, op);
  const DType result = shape::scan_dtype(self.dtype(), dtype);
  return fold(Kind, self.dtype() == result ? self : self.to(result), d, op);
}

Tensor cumsum_cuda(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return cast_and_fold<ScanKind::Sum>(self, dim, dtype, "cumsum");
}
Tensor cumprod_cuda(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return cast_and_fold<ScanKind::Prod>(self, dim, dtype, "cumprod");
}
Tensor logcumsumexp_cuda(const Tensor& self, int64_t dim) {
  const int64_t d = shape::checked_dim(self, dim, "logcumsumexp");
  shape::check_floating_scan(self, "logcumsumexp");
  return fold(ScanKind::LogSumExp, self, d, "logcumsumexp");
}

template <ScanKind Kind>
std::tuple<Tensor, Tensor> cum_extremum_cuda(const Tensor& self, int64_t dim, const char* op) {
  const int64_t d = shape::checked_dim(self, dim, op);
  Tensor values = empty(self.sizes(), self.options());
  Tensor indices = empty(self.sizes(), self.options().dtype(DType::Int64));
  if (values.numel() > 0) scan_into(Kind, self, d, values, indices, op);
  return {values, indices};
}
std::tuple<Tensor, Tensor> cummax_cuda(const Tensor& self, int64_t dim) {
  return cum_extremum_cuda<ScanKind::Max>(self, dim, "cummax");
}
std::tuple<Tensor, Tensor> cummin_cuda(const Tensor& self, int64_t dim) {
  return cum_extremum_cuda<ScanKind::Min>(self, dim, "cummin");
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("cumsum", ANATOMY_KERNEL(cumsum_cuda));
  m.impl("cumprod", ANATOMY_KERNEL(cumprod_cuda));
  m.impl("logcumsumexp", ANATOMY_KERNEL(logcumsumexp_cuda));
  m.impl("cummax", ANATOMY_KERNEL(cummax_cuda));
  m.impl("cummin", ANATOMY_KERNEL(cummin_cuda));
}

}  // namespace anatomy::cuda
