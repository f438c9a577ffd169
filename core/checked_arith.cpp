// Overflow-checked size, stride and offset arithmetic (see checked_arith.h).
#include "anatomy/core/checked_arith.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "anatomy/core/error.h"
#include "anatomy/core/shape_rules.h"

namespace anatomy {

int64_t checked_mul(int64_t a, int64_t b, const char* op, const char* what) {
  int64_t out;
  ANATOMY_CHECK(mul_fits(a, b, out), ValueError, "{}: {} overflows int64 ({} * {})", op, what, a, b);
  return out;
}

int64_t checked_add(int64_t a, int64_t b, const char* op, const char* what) {
  int64_t out;
  ANATOMY_CHECK(add_fits(a, b, out), ValueError, "{}: {} overflows int64 ({} + {})", op, what, a, b);
  return out;
}

namespace {
[[noreturn]] void throw_no_strides(IntArrayRef sizes, const char* op) {
  ANATOMY_THROW(ValueError,
                "{}: size [{}] has no int64 strides: the product of its sizes (an empty dim counting as 1) overflows "
                "int64",
                op, fmt::join(sizes, ", "));
}

// Strides for the dims in `order` (fastest first), each the product of the sizes of the dims
// before it in that order, an empty dim counting as 1 (PyTorch's rule: an empty tensor keeps
// strides as if its empty dims held one element).
DimVector strides_in_order(IntArrayRef sizes, IntArrayRef order, const char* op) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (int64_t d : order) {
    strides[d] = s;
    if (!mul_fits(s, std::max<int64_t>(sizes[d], 1), s)) throw_no_strides(sizes, op);
  }
  return strides;
}
}  // namespace

int64_t checked_span(IntArrayRef sizes, const char* op) {
  int64_t s = 1;
  for (int64_t size : sizes) {
    if (!mul_fits(s, std::max<int64_t>(size, 1), s)) throw_no_strides(sizes, op);
  }
  return s;
}

DimVector checked_contiguous_strides(IntArrayRef sizes, const char* op) {
  DimVector order(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) order[i] = static_cast<int64_t>(sizes.size() - 1 - i);
  return strides_in_order(sizes, order, op);
}

void check_memory_format_dims(IntArrayRef sizes, MemoryFormat format, const char* op) {
  if (!is_channels_last(format)) return;
  const size_t dims = channels_last_order(format).size();
  ANATOMY_CHECK(sizes.size() == dims, ValueError, "{}: {} needs a {}-D shape, got [{}]", op, to_string(format), dims,
                fmt::join(sizes, ", "));
}

DimVector checked_channels_last_strides(IntArrayRef sizes, MemoryFormat format, const char* op) {
  check_memory_format_dims(sizes, format, op);
  return strides_in_order(sizes, channels_last_order(format), op);
}

int64_t checked_view_reach(IntArrayRef sizes, IntArrayRef strides, int64_t offset, size_t element_size,
                           const char* op) {
  const bool empty = std::find(sizes.begin(), sizes.end(), 0) != sizes.end();
  int64_t reach = offset, span = 0;
  bool fits = true;
  for (size_t i = 0; i < sizes.size() && fits; ++i) {
    fits = mul_fits(std::max<int64_t>(sizes[i] - 1, 0), strides[i], span) && add_fits(reach, span, reach);
  }
  // The view's own first byte (data()), and for a non-empty view the bytes its loops reach.
  fits = fits && mul_fits(offset, static_cast<int64_t>(element_size), span) &&
         (empty || view_extent_fits(sizes, strides, offset, element_size));
  ANATOMY_CHECK(fits, ValueError,
                "{}: size [{}], stride [{}] and storage offset {} give offsets past int64 ({} bytes an element)", op,
                fmt::join(sizes, ", "), fmt::join(strides, ", "), offset, element_size);
  return reach;
}

bool view_extent_fits(IntArrayRef sizes, IntArrayRef strides, int64_t offset, size_t element_size) {
  int64_t extent = offset, span;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!mul_fits(sizes[i], strides[i], span) || !add_fits(extent, span, extent)) return false;
  }
  return mul_fits(extent, static_cast<int64_t>(element_size), span);
}

void check_factory_size(IntArrayRef sizes, const char* op) {
  checked_numel(sizes, op);
  checked_span(sizes, op);
}

}  // namespace anatomy
