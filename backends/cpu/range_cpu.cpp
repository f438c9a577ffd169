// CPU: arange and linspace.
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/type_promotion.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::cpu {
namespace {

Tensor arange_cpu(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<DType> dtype,
                  std::optional<Device>) {
  DType d = dtype.value_or(arange_default_dtype(start, end, step));
  int64_t n = arange_length(start, end, step, "arange");
  Tensor out = make_empty_tensor({n}, d, get_allocator(DeviceType::CPU), MemoryFormat::Contiguous, "arange");
  bool integral = !start.is_floating_point() && !step.is_floating_point();
  visit_dtype(d, "arange", [&]<typename T>() {
    T* data = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      // Integer arithmetic stays exact beyond 2^53. Each value lies between start and end, but
      // i * step alone may not fit int64 (arange(INT64_MIN, INT64_MAX, 2^62)): computed modulo
      // 2^64, which gives the value exactly.
      data[i] = integral
                    ? convert<T>(static_cast<int64_t>(static_cast<uint64_t>(start.to_int()) +
                                                      static_cast<uint64_t>(i) * static_cast<uint64_t>(step.to_int())))
                    : convert<T>(start.to_double() + static_cast<double>(i) * step.to_double());
    }
  });
  return out;
}

Tensor linspace_cpu(const Scalar& start, const Scalar& end, int64_t steps, std::optional<DType> dtype,
                    std::optional<Device>) {
  ANATOMY_CHECK(steps >= 0, ValueError, "linspace: number of steps must be non-negative, got {}", steps);
  DType d = dtype.value_or(kDefaultFloat);
  Tensor out = make_empty_tensor({steps}, d, get_allocator(DeviceType::CPU), MemoryFormat::Contiguous, "linspace");
  double a = start.to_double(), b = end.to_double();
  double step = steps > 1 ? (b - a) / static_cast<double>(steps - 1) : 0.0;
  visit_dtype(d, "linspace", [&]<typename T>() {
    T* data = static_cast<T*>(out.data_ptr());
    // Symmetric from both ends, as PyTorch does, so the last value is exactly `end`.
    int64_t half = (steps + 1) / 2;
    for (int64_t i = 0; i < steps; ++i) {
      double v = i < half ? a + step * static_cast<double>(i) : b - step * static_cast<double>(steps - 1 - i);
      data[i] = convert<T>(v);
    }
  });
  return out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("arange.start_step", ANATOMY_KERNEL(arange_cpu));
  m.impl("linspace", ANATOMY_KERNEL(linspace_cpu));
}

}  // namespace anatomy::cpu
