// bfloat16 (fp32's top 16 bits) storage type with correctly rounded conversions shared by host and device.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "anatomy/core/macros.h"

namespace anatomy {

namespace detail {
namespace bf16_impl {

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

}  // namespace bf16_impl

// bf16 shares fp32's exponent, so rounding is a single add on the raw bits: subnormals, the
// carry into the exponent and overflow to Inf all fall out of it. Integer-only so FTZ and the
// FPU rounding mode cannot change the answer.
ANATOMY_HOST_DEVICE inline uint16_t fp32_to_bf16_bits(float f) {
  const uint32_t u = bf16_impl::bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    // Truncating a NaN could clear every payload bit left and produce Inf; forcing the quiet
    // bit keeps it a (quiet) NaN with its sign and top payload bits.
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  }
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// Rounds once from double; going through float first would double-round values just off a tie.
ANATOMY_HOST_DEVICE inline uint16_t fp64_to_bf16_bits(double d) {
  const uint64_t u = bf16_impl::bits_of(d);
  const uint16_t sign = static_cast<uint16_t>((u >> 48) & 0x8000u);
  const uint64_t a = u & 0x7fffffffffffffffull;
  if (a > 0x7ff0000000000000ull) {
    return static_cast<uint16_t>(sign | 0x7fc0u | ((a >> 45) & 0x7fu));
  }
  if (a >= 0x47eff00000000000ull) {  // (2 - 2^-8) * 2^127: midpoint of max finite and 2^128
    return static_cast<uint16_t>(sign | 0x7f80u);
  }
  if (a >= 0x3810000000000000ull) {  // 2^-126, smallest normal
    const uint64_t rebased = a - (896ull << 52);
    const uint64_t r = (rebased + ((1ull << 44) - 1u) + ((a >> 45) & 1u)) >> 45;
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(r));
  }
  if (a <= 0x3790000000000000ull) {  // 2^-134: tie between 0 and the smallest subnormal
    return sign;
  }
  const uint64_t e = a >> 52;
  const uint64_t m = (a & 0xfffffffffffffull) | (1ull << 52);
  const uint64_t shift = 942u - e;  // 46..52: converts to units of 2^-133
  uint64_t q = m >> shift;
  const uint64_t rem = m & ((1ull << shift) - 1u);
  const uint64_t halfway = 1ull << (shift - 1u);
  if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(q));
}

ANATOMY_HOST_DEVICE inline float bf16_bits_to_fp32(uint16_t b) {
  return bf16_impl::float_of(static_cast<uint32_t>(b) << 16);
}

// 64-bit integers above 2^53 would round twice (to double, then to bf16). Rounding to odd at
// 53 bits first is exact for the second rounding because 53 >= 8 + 2.
template <std::integral I>
ANATOMY_HOST_DEVICE inline uint16_t integral_to_bf16_bits(I value) {
  if constexpr (sizeof(I) <= 4) {
    return fp64_to_bf16_bits(static_cast<double>(value));
  } else {
    const bool negative = value < I(0);
    uint64_t mag = negative ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
    uint64_t sticky = 0;
    double scale = 1.0;
    while (mag >= (1ull << 53)) {
      sticky |= mag & 1u;
      mag >>= 1;
      scale *= 2.0;
    }
    const double d = static_cast<double>(mag | sticky) * scale;
    return fp64_to_bf16_bits(negative ? -d : d);
  }
}

}  // namespace detail

struct alignas(2) BFloat16 {
  uint16_t x;

  struct from_bits_t {};

  BFloat16() = default;
  ANATOMY_HOST_DEVICE constexpr BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
  ANATOMY_HOST_DEVICE BFloat16(float value) : x(detail::fp32_to_bf16_bits(value)) {}
  ANATOMY_HOST_DEVICE BFloat16(double value) : x(detail::fp64_to_bf16_bits(value)) {}
  // Without this, BFloat16(0) would be ambiguous between the float and double constructors.
  template <std::integral I>
  ANATOMY_HOST_DEVICE BFloat16(I value) : x(detail::integral_to_bf16_bits(value)) {}

  ANATOMY_HOST_DEVICE static constexpr BFloat16 from_bits(uint16_t bits) { return BFloat16(bits, from_bits_t{}); }

  ANATOMY_HOST_DEVICE operator float() const { return detail::bf16_bits_to_fp32(x); }
};

static_assert(sizeof(BFloat16) == 2 && alignof(BFloat16) == 2);
static_assert(std::is_trivially_copyable_v<BFloat16> && std::is_trivially_default_constructible_v<BFloat16>);
static_assert(std::is_standard_layout_v<BFloat16>);

namespace detail {
// Mixed operators are templates so that they beat the built-in float operators (reached through
// operator float) instead of tying with them, which would make `b * 2.0f` ambiguous.
template <class T>
concept BFloat16ArithmeticOperand = std::is_arithmetic_v<T>;

// Same promotion rules as c10::BFloat16: floating operands widen the result, integers keep it bf16.
template <class T>
ANATOMY_HOST_DEVICE inline auto bf16_mixed_result(float r) {
  if constexpr (std::is_floating_point_v<T>) {
    return r;
  } else {
    return BFloat16(r);
  }
}
}  // namespace detail

ANATOMY_HOST_DEVICE inline BFloat16 operator+(BFloat16 a) { return a; }
// A sign-bit flip is exact and also negates NaNs and zeros the way IEEE negate does.
ANATOMY_HOST_DEVICE inline BFloat16 operator-(BFloat16 a) {
  return BFloat16::from_bits(static_cast<uint16_t>(a.x ^ 0x8000u));
}

ANATOMY_HOST_DEVICE inline BFloat16 operator+(BFloat16 a, BFloat16 b) {
  return BFloat16(static_cast<float>(a) + static_cast<float>(b));
}
ANATOMY_HOST_DEVICE inline BFloat16 operator-(BFloat16 a, BFloat16 b) {
  return BFloat16(static_cast<float>(a) - static_cast<float>(b));
}
ANATOMY_HOST_DEVICE inline BFloat16 operator*(BFloat16 a, BFloat16 b) {
  return BFloat16(static_cast<float>(a) * static_cast<float>(b));
}
ANATOMY_HOST_DEVICE inline BFloat16 operator/(BFloat16 a, BFloat16 b) {
  return BFloat16(static_cast<float>(a) / static_cast<float>(b));
}

ANATOMY_HOST_DEVICE inline BFloat16& operator+=(BFloat16& a, BFloat16 b) { return a = a + b; }
ANATOMY_HOST_DEVICE inline BFloat16& operator-=(BFloat16& a, BFloat16 b) { return a = a - b; }
ANATOMY_HOST_DEVICE inline BFloat16& operator*=(BFloat16& a, BFloat16 b) { return a = a * b; }
ANATOMY_HOST_DEVICE inline BFloat16& operator/=(BFloat16& a, BFloat16 b) { return a = a / b; }

// A double operand is not squeezed through float: the exact widened value meets it in double.
#define ANATOMY_BF16_MIXED_ARITH(op)                                                       \
  template <detail::BFloat16ArithmeticOperand T>                                           \
  ANATOMY_HOST_DEVICE inline auto operator op(BFloat16 a, T b) {                           \
    if constexpr (std::is_floating_point_v<T> && !std::is_same_v<T, float>) {              \
      return static_cast<T>(static_cast<float>(a)) op b;                                   \
    } else {                                                                               \
      return detail::bf16_mixed_result<T>(static_cast<float>(a) op static_cast<float>(b)); \
    }                                                                                      \
  }                                                                                        \
  template <detail::BFloat16ArithmeticOperand T>                                           \
  ANATOMY_HOST_DEVICE inline auto operator op(T a, BFloat16 b) {                           \
    if constexpr (std::is_floating_point_v<T> && !std::is_same_v<T, float>) {              \
      return a op static_cast<T>(static_cast<float>(b));                                   \
    } else {                                                                               \
      return detail::bf16_mixed_result<T>(static_cast<float>(a) op static_cast<float>(b)); \
    }                                                                                      \
  }                                                                                        \
  template <detail::BFloat16ArithmeticOperand T>                                           \
  ANATOMY_HOST_DEVICE inline BFloat16& operator op##=(BFloat16& a, T b) {                  \
    return a = BFloat16(a op b);                                                           \
  }

ANATOMY_BF16_MIXED_ARITH(+)
ANATOMY_BF16_MIXED_ARITH(-)
ANATOMY_BF16_MIXED_ARITH(*)
ANATOMY_BF16_MIXED_ARITH(/)
#undef ANATOMY_BF16_MIXED_ARITH

// Comparisons go through float so NaN is unordered and +0 == -0, as IEEE requires.
#define ANATOMY_BF16_COMPARE(op)                                        \
  ANATOMY_HOST_DEVICE inline bool operator op(BFloat16 a, BFloat16 b) { \
    return static_cast<float>(a) op static_cast<float>(b);              \
  }                                                                     \
  template <detail::BFloat16ArithmeticOperand T>                        \
  ANATOMY_HOST_DEVICE inline bool operator op(BFloat16 a, T b) {        \
    return static_cast<float>(a) op b;                                  \
  }                                                                     \
  template <detail::BFloat16ArithmeticOperand T>                        \
  ANATOMY_HOST_DEVICE inline bool operator op(T a, BFloat16 b) {        \
    return a op static_cast<float>(b);                                  \
  }

ANATOMY_BF16_COMPARE(==)
ANATOMY_BF16_COMPARE(!=)
ANATOMY_BF16_COMPARE(<)
ANATOMY_BF16_COMPARE(<=)
ANATOMY_BF16_COMPARE(>)
ANATOMY_BF16_COMPARE(>=)
#undef ANATOMY_BF16_COMPARE

}  // namespace anatomy

namespace std {

template <>
class numeric_limits<anatomy::BFloat16> {
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
  static constexpr bool is_iec559 = false;  // not an IEEE 754 interchange format
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 8;
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -125;
  static constexpr int min_exponent10 = -37;
  static constexpr int max_exponent = 128;
  static constexpr int max_exponent10 = 38;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  ANATOMY_HOST_DEVICE static constexpr anatomy::BFloat16 min() noexcept { return anatomy::BFloat16::from_bits(0x0080); }
  ANATOMY_HOST_DEVICE static constexpr anatomy::BFloat16 lowest() noexcept {
    return anatomy::BFloat16::from_bits(0xff7f);
  }
  ANATOMY_HOST_DEVICE static constexpr anatomy::BFloat16 max() noexcept { return anatomy::BFloat16::from_bits(0x7f7f); }
  ANATOMY_HOST_DEVICE static constexpr anatomy::BFloat16 epsilon() noexcept {
    return anatomy::BFloat16::from_bits(0x3c00);
  }
  ANATOMY_HOST_DEVICE static constexpr anatomy::BFloat16 round_error() noexcept {
    return anatomy::BFloat16::from_bits(0x3f00);
  }
  ANATOMY_HOST_DEVICE static constexpr anatomy::BFloat16 infinity() noexcept {
    return anatomy::BFloat16::from_bits(0x7f80);
  }
  ANATOMY_HOST_DEVICE static constexpr anatomy::BFloat16 quiet_NaN() noexcept {
    return anatomy::BFloat16::from_bits(0x7fc0);
  }
  ANATOMY_HOST_DEVICE static constexpr anatomy::BFloat16 signaling_NaN() noexcept {
    return anatomy::BFloat16::from_bits(0x7fa0);
  }
  ANATOMY_HOST_DEVICE static constexpr anatomy::BFloat16 denorm_min() noexcept {
    return anatomy::BFloat16::from_bits(0x0001);
  }
};

}  // namespace std
