// pad: constant_pad_nd for mode "constant", and the modes that repeat the input's own values,
// "reflect", "replicate" and "circular", as index_select along each padded dim
// (CompositeImplicitAutograd: every backend with index_select runs them, and the gradient is
// index_select's, which adds the repeated positions' gradients up).
//
// Note [Padding by reading]
// Each output position along a padded dim reads one input position: for an input of size n
// and a left pad l, output position j reads j - l when that is inside [0, n); outside, reflect
// mirrors about the edge element without repeating it (-1 -> 1, n -> n - 2), replicate takes
// the edge element, and circular wraps around (-1 -> n - 1). The index vector is built on the
// host (it depends only on sizes) and read by one index_select per padded dim, last dim first.
#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"
#include "anatomy/dispatch/ops/print.h"

namespace anatomy {
namespace {

enum class PadMode { Reflect, Replicate, Circular };

// The input position that output position `j` reads (Note [Padding by reading]).
int64_t source_position(int64_t j, int64_t n, PadMode mode) {
  switch (mode) {
    case PadMode::Reflect: {
      const int64_t period = 2 * (n - 1);
      int64_t p = period == 0 ? 0 : ((j % period) + period) % period;
      return p < n ? p : period - p;
    }
    case PadMode::Replicate:
      return std::clamp<int64_t>(j, 0, n - 1);
    case PadMode::Circular:
      return ((j % n) + n) % n;
  }
  return 0;
}

Tensor pad_composite(const Tensor& self, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  ANATOMY_CHECK(pad.size() % 2 == 0, ValueError, "pad: the pad list needs an even length, got {}", pad.size());
  const int64_t padded_dims = static_cast<int64_t>(pad.size() / 2);
  ANATOMY_CHECK(padded_dims <= self.dim(), ValueError, "pad: {} pads for a {}-dim input (at most {} pairs)", pad.size(),
                self.dim(), self.dim());
  if (mode == "constant") {
    return naming_errors("pad", [&] { return constant_pad_nd(self, pad, value ? Scalar(*value) : Scalar(0)); });
  }
  PadMode m;
  if (mode == "reflect") m = PadMode::Reflect;
  else if (mode == "replicate") m = PadMode::Replicate;
  else if (mode == "circular") m = PadMode::Circular;
  else ANATOMY_THROW(ValueError, "pad: unknown mode '{}' (expected constant, reflect, replicate or circular)", mode);
  ANATOMY_CHECK(!value.has_value(), ValueError, "pad: mode '{}' takes no value (got {})", mode, *value);
  Tensor out = self;
  for (int64_t k = 0; k < padded_dims; ++k) {
    const int64_t d = self.dim() - 1 - k;
    const int64_t left = pad[static_cast<size_t>(2 * k)];
    const int64_t right = pad[static_cast<size_t>(2 * k + 1)];
    const int64_t n = self.size(d);
    ANATOMY_CHECK(left >= 0 && right >= 0, ValueError, "pad: mode '{}' takes no negative pad, got ({}, {}) for dim {}",
                  mode, left, right, d);
    if (left == 0 && right == 0) continue;
    ANATOMY_CHECK(n > 0, ValueError, "pad: mode '{}' cannot pad dim {} of size 0 (input shape {})", mode, d,
                  shape_string(self.sizes()));
    if (m == PadMode::Reflect) {
      ANATOMY_CHECK(left < n && right < n, ValueError,
                    "pad: reflect pads ({}, {}) must be smaller than dim {}'s size {} (input shape {})", left, right, d,
                    n, shape_string(self.sizes()));
    } else if (m == PadMode::Circular) {
      ANATOMY_CHECK(left <= n && right <= n, ValueError,
                    "pad: circular pads ({}, {}) must be at most dim {}'s size {} (input shape {})", left, right, d, n,
                    shape_string(self.sizes()));
    }
    std::vector<int64_t> positions(static_cast<size_t>(n + left + right));
    for (int64_t j = 0; j < n + left + right; ++j) positions[static_cast<size_t>(j)] = source_position(j - left, n, m);
    const Tensor index =
        tensor(positions, {static_cast<int64_t>(positions.size())}, TensorOptions().dtype(DType::Int64))
            .to(self.device());
    out = index_select(out, d, index);
  }
  return out;
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("pad(Tensor self, int[] pad, str mode='constant', float? value=None) -> Tensor", ANATOMY_KERNEL(pad_composite));
}

Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  ANATOMY_OP(op, "aten::pad", Tensor(const Tensor&, IntArrayRef, std::string_view, std::optional<double>));
  return op.call(self, pad, mode, value);
}

}  // namespace anatomy
