// CUDA: arange and linspace, made on the device they name (or the current one) by the kernels
// of range.cu; the lengths, default dtypes and checks are the CPU's (backends/cpu/range_cpu.cpp).
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/core/type_promotion.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::cuda {
namespace {

Tensor empty_on(std::optional<Device> device, int64_t n, DType dtype, const char* op) {
  DeviceGuard guard(resolve_device_index(device.value_or(Device(DeviceType::CUDA)), op));
  return make_empty_tensor({n}, dtype, get_allocator(DeviceType::CUDA), MemoryFormat::Contiguous, op);
}

Tensor arange_cuda(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<DType> dtype,
                   std::optional<Device> device) {
  const DType d = dtype.value_or(arange_default_dtype(start, end, step));
  const int64_t n = arange_length(start, end, step, "arange");
  Tensor out = empty_on(device, n, d, "arange");
  if (n == 0) return out;
  DeviceGuard guard(out.device());
  if (!start.is_floating_point() && !step.is_floating_point()) {
    launch_arange_integral(d, out.data_ptr(), n, start.to_int(), step.to_int(), current_stream());
  } else {
    launch_arange_floating(d, out.data_ptr(), n, start.to_double(), step.to_double(), current_stream());
  }
  return out;
}

Tensor linspace_cuda(const Scalar& start, const Scalar& end, int64_t steps, std::optional<DType> dtype,
                     std::optional<Device> device) {
  ANATOMY_CHECK(steps >= 0, ValueError, "linspace: number of steps must be non-negative, got {}", steps);
  const DType d = dtype.value_or(kDefaultFloat);
  Tensor out = empty_on(device, steps, d, "linspace");
  if (steps == 0) return out;
  const double a = start.to_double(), b = end.to_double();
  const double step = steps > 1 ? (b - a) / static_cast<double>(steps - 1) : 0.0;
  DeviceGuard guard(out.device());
  launch_linspace(d, out.data_ptr(), steps, a, b, step, current_stream());
  return out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("arange.start_step", ANATOMY_KERNEL(arange_cuda));
  m.impl("linspace", ANATOMY_KERNEL(linspace_cuda));
}

}  // namespace anatomy::cuda
