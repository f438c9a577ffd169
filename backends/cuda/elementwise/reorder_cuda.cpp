// CUDA: flip, tril and triu (every dtype, any input strides), with the CPU's checks
// (dispatch/ops/shape_checks.h); the kernels are in reorder.cu. Results are fresh contiguous
// tensors, as on the CPU.
#include "anatomy/backends/cuda/common/make_strided_layout.h"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy::cuda {
namespace {

// As on the CPU, a flipped dim is walked from its last element with the negated stride; the
// negative strides live only in the kernel's layout, never in a tensor's metadata.
Tensor flip_cuda(const Tensor& self, IntArrayRef dims) {
  const std::vector<bool> flipped = shape::flipped_dims(self, dims);
  Tensor out = empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  DimVector in_strides(self.strides());
  int64_t start = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!flipped[d]) continue;
    start += (self.sizes()[d] - 1) * in_strides[d];
    in_strides[d] = -in_strides[d];
  }
  DeviceGuard guard(self.device());
  const char* in = static_cast<const char*>(self.data_ptr()) + start * static_cast<int64_t>(self.element_size());
  launch_flip(in, out.data_ptr(), self.element_size(),
              make_strided_layout<1>(self.sizes(), {IntArrayRef(in_strides)}, "flip"), out.numel(), current_stream());
  return out;
}

template <bool Upper>
Tensor triangle_cuda(const Tensor& self, int64_t diagonal, const char* op) {
  shape::check_matrix(self, op);
  Tensor out = empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  const int64_t nd = self.dim();
  DeviceGuard guard(self.device());
  launch_triangle(Upper, self.data_ptr(), out.data_ptr(), self.element_size(),
                  make_strided_layout<1>(self.sizes(), {self.strides()}, op), out.numel(), self.sizes()[nd - 2],
                  self.sizes()[nd - 1], diagonal, current_stream());
  return out;
}

Tensor tril_cuda(const Tensor& self, int64_t diagonal) { return triangle_cuda<false>(self, diagonal, "tril"); }
Tensor triu_cuda(const Tensor& self, int64_t diagonal) { return triangle_cuda<true>(self, diagonal, "triu"); }

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("flip", ANATOMY_KERNEL(flip_cuda));
  m.impl("tril", ANATOMY_KERNEL(tril_cuda));
  m.impl("triu", ANATOMY_KERNEL(triu_cuda));
}

}  // namespace anatomy::cuda
