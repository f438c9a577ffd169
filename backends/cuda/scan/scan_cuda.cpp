// CUDA: cumsum and cumprod along one dim (every dtype; integer and bool inputs give int64 unless
// a dtype is given). The CPU's plan (scan_cpu.cpp): the dim checked and the result dtype chosen
// by the shared rules (shape::checked_dim, shape::scan_dtype), the input cast to the result dtype
// first, a fresh contiguous result; the kernels, their accumulation types and the tiles of a few
// long rows are in scan.cu. Nothing waits.
#include "anatomy/backends/cuda/common/make_strided_layout.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/scan/scan.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy::cuda {
namespace {

template <bool Prod>
Tensor scan_cuda(const Tensor& self, int64_t dim, std::optional<DType> dtype, const char* op) {
  const int64_t d = shape::checked_dim(self, dim, op);
  const DType result = shape::scan_dtype(self.dtype(), dtype);
  const Tensor src = self.dtype() == result ? self : self.to(result);
  Tensor out = empty(self.sizes(), self.options().dtype(result));
  if (out.numel() == 0) return out;
  DeviceGuard guard(out.device());
  // The rows along d; a 0-dim tensor is one row of one element.
  ScanRows rows;
  rows.length = 1;
  DimVector other_sizes, in_strides, out_strides;
  for (int64_t k = 0; k < self.dim(); ++k) {
    if (k == d) {
      rows.length = self.sizes()[k];
      rows.in_stride = src.strides()[k];
      rows.out_stride = out.strides()[k];
      continue;
    }
    other_sizes.push_back(self.sizes()[k]);
    in_strides.push_back(src.strides()[k]);
    out_strides.push_back(out.strides()[k]);
  }
  rows.rows = make_strided_layout<2>(other_sizes, {in_strides, out_strides}, op);
  rows.num_rows = out.numel() / rows.length;
  // out is contiguous: its rows are contiguous exactly when every dim after d has size 1.
  const bool innermost = self.dim() == 0 || rows.out_stride == 1;
  // The totals of a tiled scan (Note [Tiled scans], scan.cu); freed once the kernels are queued,
  // which is safe on one stream (cub_temp.h).
  const size_t scratch_bytes = scan_scratch_bytes(result, rows, innermost);
  const Tensor scratch = scratch_bytes == 0 ? Tensor()
                                            : empty({static_cast<int64_t>(scratch_bytes)},
                                                    TensorOptions().dtype(DType::UInt8).device(out.device()));
  const bool launched = launch_scan(Prod, result, src.data_ptr(), out.data_ptr(), rows, innermost,
                                    scratch.defined() ? scratch.data_ptr() : nullptr, current_stream());
  ANATOMY_CHECK(launched, TypeError, "{}: no CUDA kernel for dtype {}", op, name(result));
  return out;
}

Tensor cumsum_cuda(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_cuda<false>(self, dim, dtype, "cumsum");
}
Tensor cumprod_cuda(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_cuda<true>(self, dim, dtype, "cumprod");
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("cumsum", ANATOMY_KERNEL(cumsum_cuda));
  m.impl("cumprod", ANATOMY_KERNEL(cumprod_cuda));
}

}  // namespace anatomy::cuda
