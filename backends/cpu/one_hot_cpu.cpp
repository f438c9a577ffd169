// CPU: one_hot. The class count may come from the data (num_classes = -1: max + 1), so every
// value is read and checked before the result is allocated.
#include <algorithm>
#include <limits>

#include "anatomy/core/strided_loop.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/shape_checks.h"

namespace anatomy::cpu {
namespace {

Tensor one_hot_cpu(const Tensor& self, int64_t num_classes) {
  shape::check_one_hot(self, num_classes);
  const int64_t* in = static_cast<const int64_t*>(self.data_ptr());
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for_each_strided<1>(self.sizes(), {self.strides()}, [&](const std::array<int64_t, 1>& o) {
    lo = std::min(lo, in[o[0]]);
    hi = std::max(hi, in[o[0]]);
  });
  num_classes = shape::one_hot_classes(num_classes, self.numel() == 0, lo, hi);
  const DimVector shape = shape::one_hot_shape(self, num_classes);
  Tensor out = naming_oom("one_hot", [&] { return zeros(shape, self.options()); });
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  // out is contiguous: element i of self (row-major) owns the row starting at i * num_classes.
  int64_t row = 0;
  for_each_strided<1>(self.sizes(), {self.strides()}, [&](const std::array<int64_t, 1>& off) {
    o[row * num_classes + in[off[0]]] = 1;
    ++row;
  });
  return out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { m.impl("one_hot", ANATOMY_KERNEL(one_hot_cpu)); }

}  // namespace anatomy::cpu
