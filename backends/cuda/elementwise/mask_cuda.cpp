// CUDA: masked_fill_.Scalar (every dtype, any strides; the mask broadcast to self). The CPU's
// checks, in the CPU's order; the value is converted to self's dtype here, on the host, exactly
// as the CPU converts it, and the kernel (mask.cu) only stores its bits. Nothing waits.
#include <fmt/ranges.h>

#include <cstring>

#include "anatomy/backends/cuda/common/make_strided_layout.h"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/indexing_rules.h"

namespace anatomy::cuda {
namespace {

Tensor masked_fill_cuda(const Tensor& self, const Tensor& mask, const Scalar& value) {
  const char* op = "masked_fill_";
  check_mask_dtype(mask, op);
  ANATOMY_CHECK(mask.device() == self.device(), DeviceError, "{}: the mask is on {} but self is on {}", op,
                mask.device().str(), self.device().str());
  ANATOMY_CHECK(is_expandable_to(mask.sizes(), self.sizes()), ValueError,
                "{}: the mask of shape [{}] does not broadcast to self's shape [{}]", op, fmt::join(mask.sizes(), ", "),
                fmt::join(self.sizes(), ", "));
  check_scalar_fits(value, self.dtype(), op);
  check_no_internal_overlap(self, op);
  if (self.numel() > 0) {
    const uint64_t bits = visit_dtype(self.dtype(), op, [&]<typename T>() {
      const T v = value.to<T>();
      uint64_t b = 0;
      std::memcpy(&b, &v, sizeof(T));
      return b;
    });
    DeviceGuard guard(self.device());
    // A mask sharing memory with self (a bool self masked by itself) is read before writing: the
    // kernel's threads write elements that other threads may still have to read as the mask.
    const Tensor m = (may_overlap(self, mask) ? mask.clone() : mask).expand(self.sizes());
    launch_masked_fill(self.data_ptr(), self.element_size(), static_cast<const uint8_t*>(m.data_ptr()),
                       make_strided_layout<2>(self.sizes(), {self.strides(), m.strides()}, op), self.numel(), bits,
                       current_stream());
  }
  self.impl()->bump_version();
  return self;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { m.impl("masked_fill_.Scalar", ANATOMY_KERNEL(masked_fill_cuda)); }

}  // namespace anatomy::cuda
