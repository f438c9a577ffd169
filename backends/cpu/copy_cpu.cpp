// CPU: copy_ between any dtypes and layouts (src broadcasts to self), and reading one element
// (_local_scalar_dense, behind item()).
#include <cstdint>

#include "anatomy/backends/cpu/convert_loops.h"
#include "anatomy/backends/cpu/copy_loops.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/strided_loop.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::cpu {
namespace {

Tensor copy_cpu(const Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  ANATOMY_CHECK(src.device().is_cpu(), DeviceError, "copy_: the CPU kernel got a source on {}", src.device().str());
  Tensor source = checked_copy_source(self, src);
  if (self.numel() == 0) return self;
  if (self.is_same(src)) {
    self.impl()->bump_version();
    return self;
  }
  // Reading and writing the same memory in different orders would read values already
  // overwritten: copy through a temporary.
  if (may_overlap(self, source)) source = clone(source, MemoryFormat::Contiguous);

  const bool contiguous = self.is_contiguous() && source.is_contiguous();
  const bool same_dtype = self.dtype() == source.dtype();
  const ConvertLoop convert_fast = contiguous && !same_dtype ? convert_loop(source.dtype(), self.dtype()) : nullptr;
  if (same_dtype && contiguous) {
    copy_bytes(self.data_ptr(), source.data_ptr(), self.nbytes());
  } else if (convert_fast != nullptr) {
    // fp32 <-> bf16 / fp16, contiguous: the vectorized conversions, over the threads.
    char* dst = static_cast<char*>(self.data_ptr());
    const char* src = static_cast<const char*>(source.data_ptr());
    const int64_t dst_size = self.element_size(), src_size = source.element_size();
    parallel_for(0, self.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      convert_fast(src + begin * src_size, dst + begin * dst_size, end - begin);
    });
  } else if (fits_copy_layout(self.sizes())) {
    // Note [Strided copies on the CPU]
    const CopyLayout layout = copy_layout(self.sizes(), self.strides(), source.strides());
    if (same_dtype) {
      // The bytes as they are: one instantiation per element size.
      auto same = [&]<typename U>() {
        copy_strided(static_cast<U*>(self.data_ptr()), static_cast<const U*>(source.data_ptr()), layout,
                     [](U v) { return v; });
      };
      switch (self.element_size()) {
        case 1:
          same.template operator()<uint8_t>();
          break;
        case 2:
          same.template operator()<uint16_t>();
          break;
        case 4:
          same.template operator()<uint32_t>();
          break;
        default:
          same.template operator()<uint64_t>();
          break;
      }
    } else {
      visit_dtype(self.dtype(), "copy_", [&]<typename D>() {
        visit_dtype(source.dtype(), "copy_", [&]<typename S>() {
          copy_strided(static_cast<D*>(self.data_ptr()), static_cast<const S*>(source.data_ptr()), layout,
                       [](S v) { return convert<D>(v); });
        });
      });
    }
  } else {
    visit_dtype(self.dtype(), "copy_", [&]<typename D>() {
      visit_dtype(source.dtype(), "copy_", [&]<typename S>() {
        D* out = static_cast<D*>(self.data_ptr());
        const S* in = static_cast<const S*>(source.data_ptr());
        for_each_strided<2>(self.sizes(), {self.strides(), source.strides()},
                            [&](const std::array<int64_t, 2>& o) { out[o[0]] = convert<D>(in[o[1]]); });
      });
    });
  }
  self.impl()->bump_version();
  return self;
}

Scalar local_scalar_dense_cpu(const Tensor& self) {
  return visit_dtype(self.dtype(), "item", [&]<typename T>() -> Scalar {
    T v = *static_cast<const T*>(self.data_ptr());
    if constexpr (std::is_same_v<T, bool>) return Scalar(v);
    else if constexpr (std::is_integral_v<T>) return Scalar(static_cast<int64_t>(v));
    else return Scalar(static_cast<double>(convert<double>(v)));
  });
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("copy_", ANATOMY_KERNEL(copy_cpu));
  m.impl("_local_scalar_dense", ANATOMY_KERNEL(local_scalar_dense_cpu));
}

}  // namespace anatomy::cpu
