// The scalar vocabulary of the element-wise functors that every backend instantiates (the CPU
// loops and the CUDA kernels): the type arithmetic happens in, the integer type it wraps in, and
// the math functions, all usable in host and device code. Includes nothing that needs fmt, so
// CUDA translation units take it as they are.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "anatomy/core/bfloat16.h"
#include "anatomy/core/convert.h"
#include "anatomy/core/half.h"
#include "anatomy/core/macros.h"

namespace anatomy::elementwise {

using anatomy::is_reduced_float_v;  // core/convert.h
template <typename T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;
// Integers other than bool.
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The type arithmetic happens in: float for the 2-byte floats, the type itself otherwise.
template <typename T>
using opmath_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

// The unsigned type integer arithmetic wraps in (at least 32 bits, so that no product of two
// promoted operands overflows a signed int).
template <typename T>
using wrap_t = std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>;

// The math functions on float and double: the C++ library's on the host, CUDA's overloads of the
// same names on the device (one spelling, `math::fmod(a, b)`, for both). On the device these are
// CUDA's accurate functions (expf, log1pf, ...), not the __expf intrinsics; nearbyint rounds half
// to even in the default rounding mode on both.
namespace math {
#if defined(__CUDA_ARCH__)
using ::acos;
using ::acosh;
using ::asin;
using ::asinh;
using ::atan;
using ::atan2;
using ::atanh;
using ::ceil;
using ::copysign;
using ::cos;
using ::cosh;
using ::erf;
using ::erfc;
using ::exp;
using ::exp2;
using ::expm1;
using ::fabs;
using ::floor;
using ::fmod;
using ::hypot;
using ::isfinite;
using ::isinf;
using ::isnan;
using ::lgamma;
using ::log;
using ::log10;
using ::log1p;
using ::log2;
using ::nearbyint;
using ::pow;
using ::sin;
using ::sinh;
using ::sqrt;
using ::tan;
using ::tanh;
using ::trunc;
#else
using std::acos;
using std::acosh;
using std::asin;
using std::asinh;
using std::atan;
using std::atan2;
using std::atanh;
using std::ceil;
using std::copysign;
using std::cos;
using std::cosh;
using std::erf;
using std::erfc;
using std::exp;
using std::exp2;
using std::expm1;
using std::fabs;
using std::floor;
using std::fmod;
using std::hypot;
using std::isfinite;
using std::isinf;
using std::isnan;
using std::lgamma;
using std::log;
using std::log10;
using std::log1p;
using std::log2;
using std::nearbyint;
using std::pow;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;
using std::trunc;
#endif
}  // namespace math

// The float or double whose bits are `f` or `d`: device code cannot call numeric_limits (host
// constexpr functions), so its special values are spelled as bits.
template <typename M>
ANATOMY_HOST_DEVICE inline M float_from_bits(uint32_t f, uint64_t d) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<M, double>) return __longlong_as_double(static_cast<long long>(d));
  else return __int_as_float(static_cast<int>(f));
#else
  if constexpr (std::is_same_v<M, double>) return std::bit_cast<double>(d);
  else return std::bit_cast<float>(f);
#endif
}
template <typename M>
ANATOMY_HOST_DEVICE inline M quiet_nan() {
  return float_from_bits<M>(0x7fc00000u, 0x7ff8000000000000ull);
}
template <typename M>
ANATOMY_HOST_DEVICE inline M infinity() {
  return float_from_bits<M>(0x7f800000u, 0x7ff0000000000000ull);
}

template <typename T>
ANATOMY_HOST_DEVICE inline T wrapping_neg(T a) {
  return static_cast<T>(wrap_t<T>(0) - static_cast<wrap_t<T>>(a));
}

// Every bit set: -1, or the largest value of an unsigned type (Note [Integer division by zero on
// CUDA], dispatch/ops/binary_functors.h).
template <typename T>
ANATOMY_HOST_DEVICE inline T all_ones() {
  return static_cast<T>(~wrap_t<T>(0));
}

}  // namespace anatomy::elementwise
