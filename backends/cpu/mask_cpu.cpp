// CPU: masking: masked_fill_, masked_select and nonzero (every dtype, any strides). The last
// two have data-dependent result shapes: they count first, then fill, in row-major order.
#include <fmt/ranges.h>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/core/strided_loop.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/indexing_rules.h"

namespace anatomy::cpu {
namespace {

Tensor masked_fill_cpu(const Tensor& self, const Tensor& mask, const Scalar& value) {
  const char* op = "masked_fill_";
  check_mask_dtype(mask, op);
  ANATOMY_CHECK(is_expandable_to(mask.sizes(), self.sizes()), ValueError,
                "{}: the mask of shape [{}] does not broadcast to self's shape [{}]", op, fmt::join(mask.sizes(), ", "),
                fmt::join(self.sizes(), ", "));
  check_scalar_fits(value, self.dtype(), op);
  check_no_internal_overlap(self, op);
  // A mask sharing memory with self (a bool self masked by itself) is read before writing.
  const Tensor m = (may_overlap(self, mask) ? mask.clone() : mask).expand(self.sizes());
  visit_dtype(self.dtype(), op, [&]<typename T>() {
    const T v = value.to<T>();
    T* data = static_cast<T*>(self.data_ptr());
    const bool* keep = static_cast<const bool*>(m.data_ptr());
    for_each_strided<2>(self.sizes(), {self.strides(), m.strides()}, [&](const std::array<int64_t, 2>& o) {
      if (keep[o[1]]) data[o[0]] = v;
    });
  });
  self.impl()->bump_version();
  return self;
}

Tensor masked_select_cpu(const Tensor& self, const Tensor& mask) {
  const char* op = "masked_select";
  check_mask_dtype(mask, op);
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), op);
  const Tensor s = self.expand(shape), m = mask.expand(shape);
  const bool* keep = static_cast<const bool*>(m.data_ptr());
  int64_t count = 0;
  for_each_strided<1>(shape, {m.strides()}, [&](const std::array<int64_t, 1>& o) { count += keep[o[0]] ? 1 : 0; });
  Tensor out = empty({count}, self.options());
  visit_dtype(self.dtype(), op, [&]<typename T>() {
    const T* in = static_cast<const T*>(s.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    for_each_strided<2>(shape, {s.strides(), m.strides()}, [&](const std::array<int64_t, 2>& o) {
      if (keep[o[1]]) *dst++ = in[o[0]];
    });
  });
  return out;
}

Tensor nonzero_cpu(const Tensor& self) {
  const char* op = "nonzero";
  const int64_t nd = self.dim();
  std::vector<int64_t> flat;  // the row-major positions of the nonzero elements
  visit_dtype(self.dtype(), op, [&]<typename T>() {
    const T* in = static_cast<const T*>(self.data_ptr());
    int64_t pos = 0;
    for_each_strided<1>(self.sizes(), {self.strides()}, [&](const std::array<int64_t, 1>& o) {
      if (convert<bool>(in[o[0]])) flat.push_back(pos);
      ++pos;
    });
  });
  const int64_t count = static_cast<int64_t>(flat.size());
  Tensor out = empty({count, nd}, TensorOptions().dtype(DType::Int64).device(self.device()));
  int64_t* dst = static_cast<int64_t*>(out.data_ptr());
  const DimVector row_major = contiguous_strides(self.sizes());
  for (int64_t i = 0; i < count; ++i) {
    int64_t rem = flat[i];
    for (int64_t d = 0; d < nd; ++d) {
      dst[i * nd + d] = rem / row_major[d];
      rem %= row_major[d];
    }
  }
  return out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("masked_fill_.Scalar", ANATOMY_KERNEL(masked_fill_cpu));
  m.impl("masked_select", ANATOMY_KERNEL(masked_select_cpu));
  m.impl("nonzero", ANATOMY_KERNEL(nonzero_cpu));
}

}  // namespace anatomy::cpu
