// The windows of the pooling and upsampling operators, host-device code that the CPU loops and
// the CUDA kernels both run, so both backends read the same input pixels with the same weights.
// Every operator's 2-D window is the product of a row window and a column window: output row o
// reads `Taps` along H, output column o' reads `Taps` along W, and the output is the weighted sum
// (or, for max pooling, the maximum) over the pairs. Includes nothing that needs fmt, so CUDA
// translation units take it as it is.
#pragma once

#include <cmath>
#include <cstdint>

#include "anatomy/core/macros.h"

namespace anatomy::pooling {

enum class WindowKind : int8_t { Max, Avg, Adaptive, Nearest, Bilinear };

// One axis (H or W) of an operator: the sizes and what the kind reads.
struct Axis {
  int64_t in = 0, out = 0;
  int64_t kernel = 1, stride = 1, pad = 0, dilation = 1;  // Max, Avg
  bool count_include_pad = true;                          // Avg
  double fixed_weight = 0;  // Avg with divisor_override: 1 / divisor on H, 1 on W; 0 when unused
  float nearest_scale = 0;  // Nearest: input pixels per output pixel, in float as PyTorch's
  double linear_scale = 0;  // Bilinear: the source-index scale
  bool align_corners = false;
};

// The two axes of an operator.
struct Window2d {
  WindowKind kind = WindowKind::Max;
  Axis h, w;
};

// The input positions one output position reads along an axis: `count` of them, at first,
// first + step, ...; the first weighs first_weight, the others weight (unused by Max).
struct Taps {
  int64_t first = 0, count = 0, step = 1;
  double first_weight = 1, weight = 1;
};

// The index max pooling records for a window that holds no input element (padding and dilation
// can leave a window's taps all outside the input): its value is the lowest there is (-inf), and
// backward passes it over, as PyTorch's CPU kernel does with -1.
inline constexpr int64_t kEmptyWindow = -1;

// Where a max window's search starts: its first tap, or kEmptyWindow when it has none.
ANATOMY_HOST_DEVICE inline int64_t window_start(const Taps& rows, const Taps& cols, int64_t width) {
  return rows.count > 0 && cols.count > 0 ? rows.first * width + cols.first : kEmptyWindow;
}

ANATOMY_HOST_DEVICE inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
ANATOMY_HOST_DEVICE inline int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

// A dilation or kernel above 2^31 (the output size is then 1, the window a tap or two) takes
// 128-bit arithmetic: the window's far end multiplies them. Smaller ones keep int64, whose
// products stay below 2^62.
inline constexpr int64_t kSmallWindow = int64_t{1} << 31;
ANATOMY_HOST_DEVICE inline Taps max_taps(const Axis& a, int64_t o) {
  const int64_t start = o * a.stride - a.pad;
  Taps t;
  t.step = a.dilation;
  if (a.dilation <= kSmallWindow && a.kernel <= kSmallWindow) {
    const int64_t end = min_i64(start + (a.kernel - 1) * a.dilation + 1, a.in);
    int64_t first = start;
    if (first < 0) first += (-first + a.dilation - 1) / a.dilation * a.dilation;  // the first tap inside
    t.first = first;
    t.count = first < end ? (end - first + a.dilation - 1) / a.dilation : 0;
    return t;
  }
  const __int128 d = a.dilation, far = static_cast<__int128>(start) + static_cast<__int128>(a.kernel - 1) * d + 1;
  const __int128 end = far < a.in ? far : a.in;
  __int128 first = start;
  if (first < 0) first += (-first + d - 1) / d * d;
  t.first = first < a.in ? static_cast<int64_t>(first) : a.in;
  t.count = first < end ? static_cast<int64_t>((end - first + d - 1) / d) : 0;
  return t;
}

// PyTorch's average: the window clipped to the padded input counts toward count_include_pad's
// divisor, the window clipped to the input is what is summed.
ANATOMY_HOST_DEVICE inline Taps avg_taps(const Axis& a, int64_t o) {
  int64_t start = o * a.stride - a.pad;
  int64_t end = min_i64(start + a.kernel, a.in + a.pad);
  const int64_t padded = end - start;
  start = max_i64(start, 0);
  end = min_i64(end, a.in);
  Taps t;
  t.first = start;
  t.count = max_i64(end - start, 0);
  const int64_t divisor = a.count_include_pad ? padded : t.count;
  t.weight = a.fixed_weight != 0 ? a.fixed_weight : (divisor > 0 ? 1.0 / static_cast<double>(divisor) : 0.0);
  t.first_weight = t.weight;
  return t;
}

ANATOMY_HOST_DEVICE inline Taps adaptive_taps(const Axis& a, int64_t o) {
  const int64_t start = (o * a.in) / a.out;
  const int64_t end = ((o + 1) * a.in + a.out - 1) / a.out;
  Taps t;
  t.first = start;
  t.count = end - start;
  t.weight = 1.0 / static_cast<double>(end - start);
  t.first_weight = t.weight;
  return t;
}

// A source position as an index in [0, in): a scale given with the sizes may point past the
// input (or, infinite, nowhere), which the index is clamped from rather than read.
ANATOMY_HOST_DEVICE inline int64_t source_index(double position, int64_t in) {
  if (!(position > 0)) return 0;
  if (position >= static_cast<double>(in - 1)) return in - 1;
  return static_cast<int64_t>(position);
}

// PyTorch's nearest_idx: the exact cases first, then floor(o * scale) in float.
ANATOMY_HOST_DEVICE inline Taps nearest_taps(const Axis& a, int64_t o) {
  Taps t;
  t.count = 1;
  if (a.out == a.in) t.first = o;
  else if (a.out == 2 * a.in) t.first = o >> 1;
  else t.first = source_index(floorf(static_cast<float>(o) * a.nearest_scale), a.in);
  return t;
}

// PyTorch's area_pixel_compute_source_index (not cubic) and its two neighbours' lambdas.
ANATOMY_HOST_DEVICE inline Taps bilinear_taps(const Axis& a, int64_t o) {
  double src =
      a.align_corners ? a.linear_scale * static_cast<double>(o) : a.linear_scale * (static_cast<double>(o) + 0.5) - 0.5;
  // PyTorch's guard_index_and_lambda: the index at most in - 1, where one tap weighs 1.
  if (!(src > 0)) src = 0;
  if (src > static_cast<double>(a.in - 1)) src = static_cast<double>(a.in - 1);
  const int64_t i0 = static_cast<int64_t>(src);
  const bool next = i0 < a.in - 1;
  const double l1 = src - static_cast<double>(i0);
  Taps t;
  t.first = i0;
  t.count = next ? 2 : 1;
  t.first_weight = next ? 1.0 - l1 : 1.0;
  t.weight = l1;
  return t;
}

ANATOMY_HOST_DEVICE inline Taps taps(WindowKind kind, const Axis& a, int64_t o) {
  switch (kind) {
    case WindowKind::Max:
      return max_taps(a, o);
    case WindowKind::Avg:
      return avg_taps(a, o);
    case WindowKind::Adaptive:
      return adaptive_taps(a, o);
    case WindowKind::Nearest:
      return nearest_taps(a, o);
    case WindowKind::Bilinear:
      return bilinear_taps(a, o);
  }
  return Taps{};
}

ANATOMY_HOST_DEVICE inline double tap_weight(const Taps& t, int64_t k) { return k == 0 ? t.first_weight : t.weight; }

// The outputs [first, last] along an axis whose max windows can hold input position `i`: output
// o's taps lie in [o stride - pad, o stride - pad + (kernel - 1) dilation], so o stride lies in
// [i + pad - (kernel - 1) dilation, i + pad]. Every output whose taps include i is in the range
// (with dilation, some in it skip i: the backward's gather checks each one's recorded index).
// For kernel and dilation up to 2^31, as max_outputs_per_input (below) admits.
struct OutputRange {
  int64_t first = 0, last = -1;
};
ANATOMY_HOST_DEVICE inline OutputRange max_outputs_holding(const Axis& a, int64_t i) {
  const int64_t top = i + a.pad;                             // o stride <= top
  const int64_t bottom = top - (a.kernel - 1) * a.dilation;  // o stride >= bottom
  OutputRange r;
  r.first = bottom <= 0 ? 0 : (bottom + a.stride - 1) / a.stride;
  r.last = min_i64(top / a.stride, a.out - 1);
  return r;
}

// At most how many outputs along an axis can hold one input position, or 0 past `limit` (a
// dilation or kernel above 2^31 included): max pooling's backward gathers per input position
// while the windows that can hold one are few, and scatters per output otherwise.
ANATOMY_HOST_DEVICE inline int64_t max_outputs_per_input(const Axis& a, int64_t limit) {
  if (a.kernel > kSmallWindow || a.dilation > kSmallWindow) return 0;
  const int64_t span = ((a.kernel - 1) * a.dilation) / a.stride + 1;
  return span <= limit ? span : 0;
}

}  // namespace anatomy::pooling
