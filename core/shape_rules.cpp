// Size inference, view strides, broadcasting and arange lengths.
#include "anatomy/core/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "anatomy/core/error.h"

namespace anatomy {

bool compute_contiguous(IntArrayRef sizes, IntArrayRef strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    // Past int64 no stride can match; only an empty dim further out makes the tensor contiguous.
    if (__builtin_mul_overflow(expected, sizes[i], &expected)) {
      return std::find(sizes.begin(), sizes.begin() + i, 0) != sizes.begin() + i;
    }
  }
  return true;
}

// These two are unchecked (their callers' shapes are known to be valid; core/checked_arith.h
// has the checked forms for shapes from a user); the multiplications wrap instead of being
// undefined, and the product past the outermost dim is never formed.
DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    if (i > 0) (void)__builtin_mul_overflow(s, std::max<int64_t>(sizes[i], 1), &s);
  }
  return strides;
}

int64_t checked_numel(IntArrayRef sizes, const char* op) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    ANATOMY_CHECK(s >= 0, ValueError, "{}: negative dimension {} in size [{}]", op, s, fmt::join(sizes, ", "));
    ANATOMY_CHECK(!__builtin_mul_overflow(n, s, &n), ValueError, "{}: size [{}] overflows int64 elements", op,
                  fmt::join(sizes, ", "));
  }
  return n;
}

namespace {

// PyTorch's is_channels_last_strides_{2d,3d}: the strides grow along `order` (C, the spatial dims
// from the last, N), gaps allowed.
bool strides_ordered_like(IntArrayRef sizes, IntArrayRef strides, IntArrayRef order) {
  if (sizes.size() != order.size() || strides[1] == 0) return false;
  int64_t min = 0;
  for (int64_t d : order) {
    if (sizes[d] == 0 || strides[d] < min) return false;
    // N111 and sliced N11W tensors have equal strides on N and C: call them NCHW.
    if (d == 0 && min == strides[1]) return false;
    min = strides[d];
    // Past int64 no later stride can be at least min.
    if (sizes[d] > 1 && __builtin_mul_overflow(min, sizes[d], &min)) return false;
  }
  return true;
}

}  // namespace

bool is_channels_last_strides(IntArrayRef sizes, IntArrayRef strides) {
  return strides_ordered_like(sizes, strides, channels_last_order(MemoryFormat::ChannelsLast));
}

bool is_channels_last_3d_strides(IntArrayRef sizes, IntArrayRef strides) {
  return strides_ordered_like(sizes, strides, channels_last_order(MemoryFormat::ChannelsLast3d));
}

bool compute_channels_last_contiguous(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f) {
  const IntArrayRef order = channels_last_order(f);
  if (sizes.size() != order.size()) return false;
  // Same rule as contiguity, over the dims in NHWC (NDHWC) order, C fastest.
  int64_t expected = 1;
  for (int64_t d : order) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    // Past int64 (an empty tensor's dims) no later stride can match: -1 matches none.
    if (__builtin_mul_overflow(expected, sizes[d], &expected)) expected = -1;
  }
  return true;
}

bool is_expandable_to(IntArrayRef shape, IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[shape.size() - 1 - i], t = desired[desired.size() - 1 - i];
    if (s != t && s != 1) return false;
  }
  return true;
}

DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op) {
  DimVector out(shape);
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      ANATOMY_CHECK(!infer, ValueError, "{}: only one dimension can be inferred (-1), got shape [{}]", op,
                    fmt::join(shape, ", "));
      infer = i;
    } else {
      ANATOMY_CHECK(shape[i] >= 0, ValueError, "{}: invalid size {} at dim {} in shape [{}]", op, shape[i], i,
                    fmt::join(shape, ", "));
      ANATOMY_CHECK(!__builtin_mul_overflow(known, shape[i], &known), ValueError,
                    "{}: shape [{}] overflows int64 elements", op, fmt::join(shape, ", "));
    }
  }
  if (infer) {
    ANATOMY_CHECK(known != 0 && numel % known == 0, ValueError, "{}: shape [{}] is invalid for input of size {}", op,
                  fmt::join(shape, ", "), numel);
    out[*infer] = numel / known;
  } else {
    ANATOMY_CHECK(known == numel, ValueError, "{}: shape [{}] is invalid for input of size {}", op,
                  fmt::join(shape, ", "), numel);
  }
  return out;
}

std::optional<DimVector> compute_view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes) {
  DimVector new_strides(new_sizes.size());
  if (sizes.empty()) {  // a 0-dim tensor becomes any all-ones shape
    for (auto& s : new_strides) s = 1;
    return new_strides;
  }
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) {
    if (sizes == new_sizes) return DimVector(strides);
    return contiguous_strides(new_sizes);  // checked by view (core/views.cpp)
  }
  // Walk the old dims from the last, grouping runs that are contiguous with each other; each
  // run of old dims must map onto a run of new dims with the same element count.
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= sizes[tensor_d];
    // A span past int64 (huge strides of a meta tensor) matches no stride: the chunk ends there.
    int64_t span;
    bool chunk_ends =
        tensor_d == 0 || (sizes[tensor_d - 1] != 1 && (__builtin_mul_overflow(tensor_numel, chunk_base_stride, &span) ||
                                                       strides[tensor_d - 1] != span));
    if (chunk_ends) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        if (__builtin_mul_overflow(view_numel, chunk_base_stride, &new_strides[view_d])) return std::nullopt;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    ANATOMY_CHECK(da == db || da == 1 || db == 1, ValueError,
                  "{}: shapes [{}] and [{}] cannot be broadcast (dim {}: {} vs {})", op, fmt::join(a, ", "),
                  fmt::join(b, ", "), i, da, db);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t arange_length(const Scalar& start_s, const Scalar& end_s, const Scalar& step_s, const char* op) {
  if (!start_s.is_floating_point() && !end_s.is_floating_point() && !step_s.is_floating_point()) {
    int64_t start = start_s.to_int(), end = end_s.to_int(), step = step_s.to_int();
    ANATOMY_CHECK(step != 0, ValueError, "{}: step must be nonzero", op);
    ANATOMY_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), ValueError,
                  "{}: upper bound and larger bound inconsistent with step sign (start {}, end {}, step {})", op, start,
                  end, step);
    // (end - start) may not fit in int64 (e.g. -2^63 to 2^63-1): count in unsigned arithmetic.
    uint64_t distance = step > 0 ? static_cast<uint64_t>(end) - static_cast<uint64_t>(start)
                                 : static_cast<uint64_t>(start) - static_cast<uint64_t>(end);
    uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
    uint64_t n = distance / magnitude + (distance % magnitude != 0);
    ANATOMY_CHECK(n <= static_cast<uint64_t>(INT64_MAX), ValueError, "{}: {} elements is too many", op, n);
    return static_cast<int64_t>(n);
  }
  double start = start_s.to_double(), end = end_s.to_double(), step = step_s.to_double();
  ANATOMY_CHECK(std::isfinite(start) && std::isfinite(end), ValueError, "{}: bounds must be finite, got {} and {}", op,
                start, end);
  ANATOMY_CHECK(step != 0 && std::isfinite(step), ValueError, "{}: step must be nonzero and finite, got {}", op, step);
  ANATOMY_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), ValueError,
                "{}: upper bound and larger bound inconsistent with step sign (start {}, end {}, step {})", op, start,
                end, step);
  double n = std::ceil((end - start) / step);
  ANATOMY_CHECK(n < 9.0e18, ValueError, "{}: {} elements is too many", op, n);
  return static_cast<int64_t>(n);
}

}  // namespace anatomy
