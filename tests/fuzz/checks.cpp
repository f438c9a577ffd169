// The result checks of checks.h, computed in 128-bit arithmetic so that the check itself
// cannot overflow where the engine did.
#include "checks.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "fixtures.h"

namespace anatomy_fuzz {
namespace {

using anatomy::Tensor;

std::string layout_of(const Tensor& t) {
  return fmt::format("{}[{}] strides [{}] offset {}", anatomy::name(t.dtype()), fmt::join(t.sizes(), ", "),
                     fmt::join(t.strides(), ", "), t.storage_offset());
}

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace

std::string check_metadata(const Tensor& t) {
  if (!t.defined()) return "a result is an undefined tensor";
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  if (sizes.size() != strides.size()) return fmt::format("{} sizes but {} strides", sizes.size(), strides.size());
  if (t.dim() > 64) return fmt::format("a result has {} dims", t.dim());
  __int128 numel = 1, hi = t.storage_offset();
  bool count_overflows = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0) return fmt::format("negative size in {}", layout_of(t));
    // The engine has no negative-stride views (flip copies), so a negative stride can only be
    // an overflowed computation.
    if (strides[d] < 0) return fmt::format("negative stride in {}", layout_of(t));
    numel *= sizes[d];
    if (numel > kMax) count_overflows = true;
    if (sizes[d] > 0) hi += static_cast<__int128>(sizes[d] - 1) * strides[d];
    if (numel > kMax) numel = kMax + 1;  // saturate: only "too many" matters from here on
  }
  if (count_overflows && numel != 0) return fmt::format("the element count of {} overflows int64", layout_of(t));
  if (!count_overflows && numel != t.numel()) {
    return fmt::format("numel() is {} but the sizes of {} give {}", t.numel(), layout_of(t),
                       static_cast<int64_t>(numel));
  }
  if (t.storage_offset() < 0) return fmt::format("negative storage offset in {}", layout_of(t));
  const __int128 item = static_cast<__int128>(t.element_size());
  const __int128 end_bytes = (hi + 1) * item;
  if (numel == 0) {
    // Nothing is read, but the data pointer is still computed (offset * itemsize) and so are
    // element offsets (as PyTorch allows, the byte extent of an empty tensor may exceed int64).
    if (hi > kMax) return fmt::format("the element extent of the empty {} overflows int64", layout_of(t));
    if (static_cast<__int128>(t.storage_offset()) * item > kMax) {
      return fmt::format("the byte offset of the empty {} overflows int64", layout_of(t));
    }
  } else if (end_bytes > static_cast<__int128>(t.storage()->nbytes())) {
    return fmt::format("{} reaches element {} but its storage holds {} bytes ({} elements)", layout_of(t),
                       static_cast<int64_t>(std::min(hi, kMax)), t.storage()->nbytes(),
                       t.storage()->nbytes() / t.element_size());
  }
  if (t.is_contiguous() && numel > 0) {
    __int128 expected = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      if (sizes[d] != 1 && strides[d] != expected) return fmt::format("{} claims to be contiguous", layout_of(t));
      expected *= sizes[d];
    }
  }
  return "";
}

std::string check_readable(const Tensor& t) {
  if (t.numel() == 0 || t.numel() > kReadLimit) return "";
  std::vector<double> direct;
  for (int64_t pos : positions(t)) direct.push_back(read_element(t, pos));
  try {
    Tensor wide = t.to(anatomy::DType::Float64, false, /*copy=*/true);
    // to() keeps a dense layout (as PyTorch's memory_format=preserve), so only the shape must match.
    if (wide.sizes() != t.sizes() || wide.dtype() != anatomy::DType::Float64)
      return "to(fp64) gave another shape or dtype";
    Tensor same = t.contiguous();
    if (same.sizes() != t.sizes() || !same.is_contiguous())
      return "contiguous() changed the shape or is not contiguous";
    std::vector<int64_t> wide_pos = positions(wide), same_pos = positions(same);
    for (size_t k = 0; k < direct.size(); ++k) {
      double a = read_element(wide, wide_pos[k]);
      double b = read_element(same, same_pos[k]);
      if (!same_value(a, direct[k]) || !same_value(b, direct[k])) {
        return fmt::format("element {} of {} is {} read directly, {} through to(fp64), {} through contiguous()", k,
                           layout_of(t), direct[k], a, b);
      }
    }
  } catch (const std::exception& e) {
    return fmt::format("reading {} threw: {}", layout_of(t), e.what());
  }
  return "";
}

}  // namespace anatomy_fuzz
