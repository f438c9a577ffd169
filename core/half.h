// IEEE 754 binary16 storage type with exact, correctly rounded conversions shared by host and device.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "anatomy/core/macros.h"

namespace anatomy {

namespace detail {
namespace half_impl {

// Device code cannot call std::bit_cast without --expt-relaxed-constexpr, so the device pass uses
// the CUDA reinterpretation intrinsics instead; both compile to plain register moves.
ANATOMY_HOST_DEVICE inline uint32_t bits_of(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  return std::bit_cast<uint32_t>(f);
#endif
}

ANATOMY_HOST_DEVICE inline float float_of(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  return std::bit_cast<float>(u);
#endif
}

ANATOMY_HOST_DEVICE inline uint64_t bits_of(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  return std::bit_cast<uint64_t>(d);
#endif
}

}  // namespace half_impl

// Integer-only rounding so the result never depends on the FPU rounding mode or on
// flush-to-zero settings, and host and device produce identical bits.
ANATOMY_HOST_DEVICE inline uint16_t fp32_to_fp16_bits(float f) {
  const uint32_t u = half_impl::bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) {
    // Keep the payload's top bits but force the quiet bit so an sNaN cannot survive the narrowing.
    return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  }
  if (a >= 0x477ff000u) {
    // 65520 is the midpoint between 65504 (odd mantissa) and 2^16, so it and everything above is Inf.
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (a >= 0x38800000u) {
    // Carry out of the mantissa moves into the exponent, which is exactly the rounding we want.
    const uint32_t rebased = a - (112u << 23);
    return static_cast<uint16_t>(sign | ((rebased + 0xfffu + ((a >> 13) & 1u)) >> 13));
  }
  if (a <= 0x33000000u) {
    // 2^-25 is the tie between 0 and the smallest subnormal; ties go to the even one, zero.
    return sign;
  }
  const uint32_t e = a >> 23;
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e;  // 14..24: converts to units of 2^-24
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}

// Rounds once from double; going through float first would double-round values just off a tie.
ANATOMY_HOST_DEVICE inline uint16_t fp64_to_fp16_bits(double d) {
  const uint64_t u = half_impl::bits_of(d);
  const uint16_t sign = static_cast<uint16_t>((u >> 48) & 0x8000u);
  const uint64_t a = u & 0x7fffffffffffffffull;
  if (a > 0x7ff0000000000000ull) {
    return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 42) & 0x3ffu));
  }
  if (a >= 0x40effe0000000000ull) {  // 65520.0
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (a >= 0x3f10000000000000ull) {  // 2^-14, smallest normal half
    const uint64_t rebased = a - (1008ull << 52);
    const uint64_t r = (rebased + ((1ull << 41) - 1u) + ((a >> 42) & 1u)) >> 42;
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(r));
  }
  if (a <= 0x3e60000000000000ull) {  // 2^-25
    return sign;
  }
  const uint64_t e = a >> 52;
  const uint64_t m = (a & 0xfffffffffffffull) | (1ull << 52);
  const uint64_t shift = 1051u - e;  // 43..53: converts to units of 2^-24
  uint64_t q = m >> shift;
  const uint64_t rem = m & ((1ull << shift) - 1u);
  const uint64_t halfway = 1ull << (shift - 1u);
  if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(q));
}

ANATOMY_HOST_DEVICE inline float fp16_bits_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  const uint32_t m = h & 0x3ffu;
  if (e == 0x1fu) {
    // NaNs come out quiet, matching what IEEE widening (and x86/PTX hardware) does to an sNaN.
    return half_impl::float_of(sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u));
  }
  if (e == 0) {
    // m * 2^-24 is exact in float and far above float's subnormal range, so FTZ cannot touch it.
    const float mag = static_cast<float>(m) * 5.9604644775390625e-8f;
    return half_impl::float_of(sign | half_impl::bits_of(mag));
  }
  return half_impl::float_of(sign | ((e + 112u) << 23) | (m << 13));
}

}  // namespace detail

struct alignas(2) Half {
  uint16_t x;

  struct from_bits_t {};

  Half() = default;
  ANATOMY_HOST_DEVICE constexpr Half(uint16_t bits, from_bits_t) : x(bits) {}
  ANATOMY_HOST_DEVICE Half(float value) : x(detail::fp32_to_fp16_bits(value)) {}
  ANATOMY_HOST_DEVICE Half(double value) : x(detail::fp64_to_fp16_bits(value)) {}
  // Without this, Half(0) would be ambiguous between the float and double constructors. Going
  // through float is exact below 2^24 and anything larger overflows to Inf either way.
  template <std::integral I>
  ANATOMY_HOST_DEVICE Half(I value) : x(detail::fp32_to_fp16_bits(static_cast<float>(value))) {}

  ANATOMY_HOST_DEVICE static constexpr Half from_bits(uint16_t bits) { return Half(bits, from_bits_t{}); }

  ANATOMY_HOST_DEVICE operator float() const { return detail::fp16_bits_to_fp32(x); }
};

static_assert(sizeof(Half) == 2 && alignof(Half) == 2);
static_assert(std::is_trivially_copyable_v<Half> && std::is_trivially_default_constructible_v<Half>);
static_assert(std::is_standard_layout_v<Half>);

namespace detail {
// Mixed operators are templates so that they beat the built-in float operators (reached through
// operator float) instead of tying with them, which would make `h * 2.0f` ambiguous.
template <class T>
concept HalfArithmeticOperand = std::is_arithmetic_v<T>;

// Same promotion rules as c10::Half: floating operands widen the result, integers keep it Half.
template <class T>
ANATOMY_HOST_DEVICE inline auto half_mixed_result(float r) {
  if constexpr (std::is_floating_point_v<T>) {
    return r;
  } else {
    return Half(r);
  }
}
}  // namespace detail

ANATOMY_HOST_DEVICE inline Half operator+(Half a) { return a; }
// A sign-bit flip is exact and also negates NaNs and zeros the way IEEE negate does.
ANATOMY_HOST_DEVICE inline Half operator-(Half a) { return Half::from_bits(static_cast<uint16_t>(a.x ^ 0x8000u)); }

ANATOMY_HOST_DEVICE inline Half operator+(Half a, Half b) {
  return Half(static_cast<float>(a) + static_cast<float>(b));
}
ANATOMY_HOST_DEVICE inline Half operator-(Half a, Half b) {
  return Half(static_cast<float>(a) - static_cast<float>(b));
}
ANATOMY_HOST_DEVICE inline Half operator*(Half a, Half b) {
  return Half(static_cast<float>(a) * static_cast<float>(b));
}
ANATOMY_HOST_DEVICE inline Half operator/(Half a, Half b) {
  return Half(static_cast<float>(a) / static_cast<float>(b));
}

ANATOMY_HOST_DEVICE inline Half& operator+=(Half& a, Half b) { return a = a + b; }
ANATOMY_HOST_DEVICE inline Half& operator-=(Half& a, Half b) { return a = a - b; }
ANATOMY_HOST_DEVICE inline Half& operator*=(Half& a, Half b) { return a = a * b; }
ANATOMY_HOST_DEVICE inline Half& operator/=(Half& a, Half b) { return a = a / b; }

// A double operand is not squeezed through float: the exact widened value meets it in double.
#define ANATOMY_HALF_MIXED_ARITH(op)                                                       \
  template <detail::HalfArithmeticOperand T>                                               \
  ANATOMY_HOST_DEVICE inline auto operator op(Half a, T b) {                               \
    if constexpr (std::is_floating_point_v<T> && !std::is_same_v<T, float>) {              \
      return static_cast<T>(static_cast<float>(a)) op b;                                   \
    } else {                                                                               \
      return detail::half_mixed_result<T>(static_cast<float>(a) op static_cast<float>(b)); \
    }                                                                                      \
  }                                                                                        \
  template <detail::HalfArithmeticOperand T>                                               \
  ANATOMY_HOST_DEVICE inline auto operator op(T a, Half b) {                               \
    if constexpr (std::is_floating_point_v<T> && !std::is_same_v<T, float>) {              \
      return a op static_cast<T>(static_cast<float>(b));                                   \
    } else {                                                                               \
      return detail::half_mixed_result<T>(static_cast<float>(a) op static_cast<float>(b)); \
    }                                                                                      \
  }                                                                                        \
  template <detail::HalfArithmeticOperand T>                                               \
  ANATOMY_HOST_DEVICE inline Half& operator op##=(Half& a, T b) {                          \
    return a = Half(a op b);                                                               \
  }

ANATOMY_HALF_MIXED_ARITH(+)
ANATOMY_HALF_MIXED_ARITH(-)
ANATOMY_HALF_MIXED_ARITH(*)
ANATOMY_HALF_MIXED_ARITH(/)
#undef ANATOMY_HALF_MIXED_ARITH

// Comparisons go through float so NaN is unordered and +0 == -0, as IEEE requires.
#define ANATOMY_HALF_COMPARE(op)                                \
  ANATOMY_HOST_DEVICE inline bool operator op(Half a, Half b) { \
    return static_cast<float>(a) op static_cast<float>(b);      \
  }                                                             \
  template <detail::HalfArithmeticOperand T>                    \
  ANATOMY_HOST_DEVICE inline bool operator op(Half a, T b) {    \
    return static_cast<float>(a) op b;                          \
  }                                                             \
  template <detail::HalfArithmeticOperand T>                    \
  ANATOMY_HOST_DEVICE inline bool operator op(T a, Half b) {    \
    return a op static_cast<float>(b);                          \
  }

ANATOMY_HALF_COMPARE(==)
ANATOMY_HALF_COMPARE(!=)
ANATOMY_HALF_COMPARE(<)
ANATOMY_HALF_COMPARE(<=)
ANATOMY_HALF_COMPARE(>)
ANATOMY_HALF_COMPARE(>=)
#undef ANATOMY_HALF_COMPARE

}  // namespace anatomy

namespace std {

template <>
class numeric_limits<anatomy::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr float_denorm_style has_denorm = denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr float_round_style round_style = round_to_nearest;
  static constexpr bool is_iec559 = true;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 11;
  static constexpr int digits10 = 3;
  static constexpr int max_digits10 = 5;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -13;
  static constexpr int min_exponent10 = -4;
  static constexpr int max_exponent = 16;
  static constexpr int max_exponent10 = 4;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  ANATOMY_HOST_DEVICE static constexpr anatomy::Half min() noexcept { return anatomy::Half::from_bits(0x0400); }
  ANATOMY_HOST_DEVICE static constexpr anatomy::Half lowest() noexcept { return anatomy::Half::from_bits(0xfbff); }
  ANATOMY_HOST_DEVICE static constexpr anatomy::Half max() noexcept { return anatomy::Half::from_bits(0x7bff); }
  ANATOMY_HOST_DEVICE static constexpr anatomy::Half epsilon() noexcept { return anatomy::Half::from_bits(0x1400); }
  ANATOMY_HOST_DEVICE static constexpr anatomy::Half round_error() noexcept { return anatomy::Half::from_bits(0x3800); }
  ANATOMY_HOST_DEVICE static constexpr anatomy::Half infinity() noexcept { return anatomy::Half::from_bits(0x7c00); }
  ANATOMY_HOST_DEVICE static constexpr anatomy::Half quiet_NaN() noexcept { return anatomy::Half::from_bits(0x7e00); }
  ANATOMY_HOST_DEVICE static constexpr anatomy::Half signaling_NaN() noexcept {
    return anatomy::Half::from_bits(0x7d00);
  }
  ANATOMY_HOST_DEVICE static constexpr anatomy::Half denorm_min() noexcept { return anatomy::Half::from_bits(0x0001); }
};

}  // namespace std
