// CUDA: one_hot (int64 class values, any strides). With num_classes = -1 the result's size comes
// from the data: the least and the greatest value are reduced on the device and read with ONE
// small copy (2 int64), the op's only wait for the device (reported by the sync-debug mode,
// sync_debug.h), then checked by the CPU's rule (shape::one_hot_classes). With an explicit
// num_classes nothing waits: the kernel checks each value and reports a bad one through the
// device's IndexErrorSink, raised as the CPU's ValueError at the next wait (Note [Bad indices on
// the device], index_error.h).
#include "anatomy/backends/cuda/common/cub_temp.h"
#include "anatomy/backends/cuda/common/strided_run.h"
#include "anatomy/backends/cuda/index/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy::cuda {
namespace {

Tensor one_hot_cuda(const Tensor& self, int64_t num_classes) {
  shape::check_one_hot(self, num_classes);
  const bool empty_input = self.numel() == 0;
  if (empty_input) {
    num_classes = shape::one_hot_classes(num_classes, true, 0, 0);
    const DimVector shape = shape::one_hot_shape(self, num_classes);
    return naming_oom("one_hot", [&] { return empty(shape, self.options()); });
  }
  DeviceGuard guard(self.device());
  const StridedRun run = as_strided_run(self);
  const int64_t* in = static_cast<const int64_t*>(run.tensor.data_ptr());
  if (num_classes == -1) {
    const Tensor min_max = empty({2}, self.options());
    with_cub_temp(self.device(), [&](void* temp, size_t& bytes) {
      one_hot_min_max(temp, bytes, in, run.stride, self.numel(), static_cast<int64_t*>(min_max.data_ptr()),
                      current_stream());
    });
    const Tensor host = min_max.cpu();  // the wait
    const int64_t* lo_hi = static_cast<const int64_t*>(host.data_ptr());
    num_classes = shape::one_hot_classes(-1, false, lo_hi[0], lo_hi[1]);
  }
  const DimVector shape = shape::one_hot_shape(self, num_classes);
  Tensor out = naming_oom("one_hot", [&] { return empty(shape, self.options()); });
  launch_one_hot(in, run.stride, self.numel(), num_classes, static_cast<int64_t*>(out.data_ptr()),
                 index_error_sink(current_device(), "one_hot"), current_stream());
  return out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { m.impl("one_hot", ANATOMY_KERNEL(one_hot_cuda)); }

}  // namespace anatomy::cuda
