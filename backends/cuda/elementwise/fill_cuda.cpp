// CUDA: fill_ (every dtype, any strides). The value is converted to the element type here, on
// the host, exactly as the CPU kernel converts it; the kernels in fill.cu only store bits.
#include <cstring>

#include "anatomy/backends/cuda/common/make_strided_layout.h"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::cuda {
namespace {

Tensor fill_cuda(const Tensor& self, const Scalar& value) {
  check_scalar_fits(value, self.dtype(), "fill_");
  check_no_internal_overlap(self, "fill_");
  if (self.numel() > 0) {
    uint64_t bits = visit_dtype(self.dtype(), "fill_", [&]<typename T>() {
      T v = value.to<T>();
      uint64_t b = 0;
      std::memcpy(&b, &v, sizeof(T));
      return b;
    });
    DeviceGuard guard(self.device());
    // A dense tensor (contiguous, or any permutation of it) covers one block of memory that
    // starts at element 0, whatever the order of its dims.
    if (self.is_non_overlapping_and_dense()) {
      launch_fill_dense(self.data_ptr(), self.element_size(), self.numel(), bits, current_stream());
    } else {
      launch_fill_strided(self.data_ptr(), self.element_size(),
                          make_strided_layout<1>(self.sizes(), {self.strides()}, "fill_"), self.numel(), bits,
                          current_stream());
    }
  }
  self.impl()->bump_version();
  return self;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { m.impl("fill_.Scalar", ANATOMY_KERNEL(fill_cuda)); }

}  // namespace anatomy::cuda
