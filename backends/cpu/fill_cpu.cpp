// CPU: fill_ (every dtype, any strides).
#include <algorithm>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/strided_loop.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::cpu {
namespace {

Tensor fill_cpu(const Tensor& self, const Scalar& value) {
  check_scalar_fits(value, self.dtype(), "fill_");
  check_no_internal_overlap(self, "fill_");
  visit_dtype(self.dtype(), "fill_", [&]<typename T>() {
    T v = value.to<T>();
    T* data = static_cast<T*>(self.data_ptr());
    if (self.is_contiguous()) {
      std::fill(data, data + self.numel(), v);
    } else {
      for_each_strided<1>(self.sizes(), {self.strides()}, [&](const std::array<int64_t, 1>& o) { data[o[0]] = v; });
    }
  });
  self.impl()->bump_version();
  return self;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { m.impl("fill_.Scalar", ANATOMY_KERNEL(fill_cpu)); }

}  // namespace anatomy::cpu
