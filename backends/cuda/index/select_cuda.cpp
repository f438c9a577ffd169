// CUDA: nonzero and masked_select (every dtype, any strides; masked_select broadcasts self and
// the mask). Their result sizes depend on the data, so each counts on the device first and the
// host reads the count: ONE small copy from the device (item() of a 0-dim int64), the ops' only
// wait for the device, which the sync-debug mode (sync_debug.h) reports as
// aten::_local_scalar_dense. Then the result is allocated and CUB writes it (select.cu), in
// row-major order as on the CPU. An empty input waits for nothing. CUB reads each operand as one
// strided run (strided_run.h); any other layout is copied to a contiguous one first.
#include "anatomy/backends/cuda/common/cub_temp.h"
#include "anatomy/backends/cuda/common/strided_run.h"
#include "anatomy/backends/cuda/index/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/indexing_rules.h"

namespace anatomy::cuda {
namespace {

Tensor nonzero_cuda(const Tensor& self) {
  const char* op = "nonzero";
  const int64_t nd = self.dim();
  const TensorOptions index_options = TensorOptions().dtype(DType::Int64).device(self.device());
  if (self.numel() == 0) return empty({0, nd}, index_options);
  ANATOMY_CHECK(nd <= kMaxDims, NotImplementedError, "{}: the CUDA kernel takes at most {} dims, got {}", op, kMaxDims,
                nd);
  DeviceGuard guard(self.device());
  const StridedRun in = as_strided_run(self);
  const bool floating = is_floating(self.dtype());
  const Tensor count = empty({}, index_options);
  with_cub_temp(self.device(), [&](void* temp, size_t& bytes) {
    nonzero_count(temp, bytes, in.tensor.data_ptr(), in.stride, self.element_size(), floating, self.numel(),
                  static_cast<int64_t*>(count.data_ptr()), current_stream());
  });
  const int64_t n = count.item<int64_t>();  // the wait
  Tensor out = empty({n, nd}, index_options);
  if (n == 0 || nd == 0) return out;  // a 0-dim self: [0, 0] or [1, 0], no coordinates
  // The row-major positions of the nonzero elements; for a 1-D self they are the coordinates.
  const Tensor positions = nd == 1 ? out : empty({n}, index_options);
  const Tensor selected = empty({}, index_options);
  with_cub_temp(self.device(), [&](void* temp, size_t& bytes) {
    nonzero_positions(temp, bytes, in.tensor.data_ptr(), in.stride, self.element_size(), floating, self.numel(),
                      static_cast<int64_t*>(positions.data_ptr()), static_cast<int64_t*>(selected.data_ptr()),
                      current_stream());
  });
  if (nd > 1) {
    RowMajorShape shape;
    shape.ndim = static_cast<int>(nd);
    for (int64_t d = 0; d < nd; ++d) shape.sizes[d] = self.sizes()[d];
    launch_nonzero_coordinates(static_cast<const int64_t*>(positions.data_ptr()), n, shape,
                               static_cast<int64_t*>(out.data_ptr()), current_stream());
  }
  return out;
}

Tensor masked_select_cuda(const Tensor& self, const Tensor& mask) {
  const char* op = "masked_select";
  check_mask_dtype(mask, op);
  ANATOMY_CHECK(mask.device() == self.device(), DeviceError, "{}: the mask is on {} but self is on {}", op,
                mask.device().str(), self.device().str());
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), op);
  const Tensor s = self.expand(shape), m = mask.expand(shape);
  const int64_t numel = s.numel();
  if (numel == 0) return empty({0}, self.options());
  DeviceGuard guard(self.device());
  const StridedRun values = as_strided_run(s), flags = as_strided_run(m);
  const uint8_t* keep = static_cast<const uint8_t*>(flags.tensor.data_ptr());
  const TensorOptions count_options = TensorOptions().dtype(DType::Int64).device(self.device());
  const Tensor count = empty({}, count_options);
  with_cub_temp(self.device(), [&](void* temp, size_t& bytes) {
    masked_select_count(temp, bytes, keep, flags.stride, numel, static_cast<int64_t*>(count.data_ptr()),
                        current_stream());
  });
  const int64_t n = count.item<int64_t>();  // the wait
  Tensor out = empty({n}, self.options());
  if (n == 0) return out;
  const Tensor selected = empty({}, count_options);
  with_cub_temp(self.device(), [&](void* temp, size_t& bytes) {
    masked_select_values(temp, bytes, values.tensor.data_ptr(), values.stride, s.element_size(), keep, flags.stride,
                         numel, out.data_ptr(), static_cast<int64_t*>(selected.data_ptr()), current_stream());
  });
  return out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("masked_select", ANATOMY_KERNEL(masked_select_cuda));
  m.impl("nonzero", ANATOMY_KERNEL(nonzero_cuda));
}

}  // namespace anatomy::cuda
