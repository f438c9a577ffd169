// CPU: flip, tril and triu (repeat, roll and constant_pad_nd are composites in
// dispatch/ops/shape.cpp). Results are fresh contiguous tensors.
#include <array>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/strided_loop.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy::cpu {
namespace {

// A flipped dim is read from its last element backwards: the walk starts there and steps by the
// negated stride. The negative strides live only in this loop, never in a tensor's metadata.
Tensor flip_cpu(const Tensor& self, IntArrayRef dims) {
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
  visit_dtype(self.dtype(), "flip", [&]<typename T>() {
    const T* in = static_cast<const T*>(self.data_ptr()) + start;
    T* o = static_cast<T*>(out.data_ptr());
    for_each_strided<2>(out.sizes(), {out.strides(), IntArrayRef(in_strides)},
                        [&](const std::array<int64_t, 2>& off) { o[off[0]] = in[off[1]]; });
  });
  return out;
}

// Keeps element (i, j) of every matrix in the last two dims when j - i is on the kept side of
// `diagonal` (upper: j - i >= diagonal; lower: j - i <= diagonal), else writes zero.
template <bool Upper>
Tensor triangle_cpu(const Tensor& self, int64_t diagonal, const char* op) {
  shape::check_matrix(self, op);
  Tensor out = empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  const int64_t nd = self.dim();
  const int64_t rows = self.sizes()[nd - 2], cols = self.sizes()[nd - 1];
  const int64_t rs = self.strides()[nd - 2], cs = self.strides()[nd - 1];
  const IntArrayRef batch_sizes(self.sizes().data(), nd - 2);
  const std::array<IntArrayRef, 2> batch_strides = {IntArrayRef(out.strides().data(), nd - 2),
                                                    IntArrayRef(self.strides().data(), nd - 2)};
  visit_dtype(self.dtype(), op, [&]<typename T>() {
    const T* in = static_cast<const T*>(self.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    const T zero = convert<T>(0.0f);
    for_each_strided<2>(batch_sizes, batch_strides, [&](const std::array<int64_t, 2>& base) {
      for (int64_t i = 0; i < rows; ++i) {
        T* orow = o + base[0] + i * cols;
        const T* irow = in + base[1] + i * rs;
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = Upper ? (j - i >= diagonal) : (j - i <= diagonal);
          orow[j] = keep ? irow[j * cs] : zero;
        }
      }
    });
  });
  return out;
}

Tensor tril_cpu(const Tensor& self, int64_t diagonal) { return triangle_cpu<false>(self, diagonal, "tril"); }
Tensor triu_cpu(const Tensor& self, int64_t diagonal) { return triangle_cpu<true>(self, diagonal, "triu"); }

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("flip", ANATOMY_KERNEL(flip_cpu));
  m.impl("tril", ANATOMY_KERNEL(tril_cpu));
  m.impl("triu", ANATOMY_KERNEL(triu_cpu));
}

}  // namespace anatomy::cpu
