// The random fill operators' argument rules (see random_args.h).
#include "anatomy/dispatch/ops/random_args.h"

#include <cmath>
#include <limits>

#include "anatomy/core/dtype_visit.h"

namespace anatomy {

void check_uniform_args(DType t, double from, double to) {
  ANATOMY_CHECK(is_floating(t), TypeError, "uniform_: needs a floating tensor, got {}", name(t));
  ANATOMY_CHECK(from <= to && std::isfinite(from) && std::isfinite(to), ValueError,
                "uniform_: expects from <= to and both finite, got from={} to={}", from, to);
}

void check_normal_args(DType t, double std) {
  ANATOMY_CHECK(is_floating(t), TypeError, "normal_: needs a floating tensor, got {}", name(t));
  ANATOMY_CHECK(std >= 0.0 && std::isfinite(std), ValueError, "normal_: std must be finite and >= 0, got {}", std);
}

uint64_t random_range(DType t, int64_t from, std::optional<int64_t> to) {
  const int64_t limit = visit_dtype(t, "random_", [&]<typename T>() -> int64_t {
    if constexpr (std::is_same_v<T, bool>) return 1;
    else if constexpr (std::is_integral_v<T>) return static_cast<int64_t>(std::numeric_limits<T>::max());
    else return int64_t{1} << mantissa_digits<T>();
  });
  const int64_t lowest = visit_dtype(t, "random_", [&]<typename T>() -> int64_t {
    if constexpr (std::is_integral_v<T>) return static_cast<int64_t>(std::numeric_limits<T>::lowest());
    else return -limit;
  });
  ANATOMY_CHECK(from >= lowest, ValueError, "random_: from={} is below the smallest {} value {}", from, name(t),
                lowest);
  // `to` is exclusive; without it the range ends at the dtype's limit (inclusive).
  if (!to) return static_cast<uint64_t>(limit) - static_cast<uint64_t>(from) + 1;
  ANATOMY_CHECK(from < *to, ValueError, "random_: expects from < to, got from={} to={}", from, *to);
  ANATOMY_CHECK(*to - 1 <= limit, ValueError, "random_: to - 1 = {} is above the largest {} value {}", *to - 1, name(t),
                limit);
  return static_cast<uint64_t>(*to) - static_cast<uint64_t>(from);
}

}  // namespace anatomy
