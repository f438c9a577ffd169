// Exhaustive and randomized checks of Half conversions against the compiler's _Float16.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>

#include "anatomy/core/half.h"

using anatomy::Half;
using anatomy::detail::fp16_bits_to_fp32;
using anatomy::detail::fp32_to_fp16_bits;
using anatomy::detail::fp64_to_fp16_bits;

namespace {

// g++ on x86-64 implements _Float16 conversions in libgcc with correct rounding; it is the
// independent reference.
float ref_fp16_to_fp32(uint16_t bits) { return static_cast<float>(std::bit_cast<_Float16>(bits)); }
uint16_t ref_fp32_to_fp16(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }
uint16_t ref_fp64_to_fp16(double d) { return std::bit_cast<uint16_t>(static_cast<_Float16>(d)); }

bool is_nan16(uint16_t h) { return (h & 0x7fffu) > 0x7c00u; }
uint32_t bits32(float f) { return std::bit_cast<uint32_t>(f); }
float float_from(uint32_t u) { return std::bit_cast<float>(u); }

}  // namespace

TEST_CASE("Half: fp16 -> fp32 matches _Float16 for all 65536 patterns") {
  int mismatches = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float ours = fp16_bits_to_fp32(h);
    const float ref = ref_fp16_to_fp32(h);
    if (is_nan16(h)) {
      if (!std::isnan(ours)) ++mismatches;
      // Quiet, same sign and payload top bits as the hardware/libgcc widening.
      if (bits32(ours) != bits32(ref)) ++mismatches;
    } else if (bits32(ours) != bits32(ref)) {
      ++mismatches;
    }
    if (static_cast<float>(Half::from_bits(h)) != ours && !is_nan16(h)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("Half: fp32 -> fp16 round trips every non-NaN pattern and keeps NaNs quiet") {
  int mismatches = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float f = fp16_bits_to_fp32(h);
    const uint16_t back = fp32_to_fp16_bits(f);
    if (is_nan16(h)) {
      // Widening quiets, narrowing keeps sign and payload: the quieted input comes back.
      if (back != (h | 0x0200u)) ++mismatches;
    } else if (back != h) {
      ++mismatches;
    }
    if (!is_nan16(h) && Half(f).x != h) ++mismatches;
    if (!is_nan16(h) && Half(static_cast<double>(f)).x != h) ++mismatches;
  }
  CHECK(mismatches == 0);

  // A signalling float NaN whose payload lives only in the low bits must not become Inf.
  const uint16_t from_snan = fp32_to_fp16_bits(float_from(0xff800001u));
  CHECK(is_nan16(from_snan));
  CHECK((from_snan & 0x0200u) != 0);
  CHECK((from_snan & 0x8000u) != 0);
  CHECK(fp32_to_fp16_bits(std::numeric_limits<float>::quiet_NaN()) == 0x7e00u);
  CHECK(fp64_to_fp16_bits(std::bit_cast<double>(0x7ff0000000000001ull)) == 0x7e00u);
  CHECK(fp32_to_fp16_bits(std::numeric_limits<float>::infinity()) == 0x7c00u);
  CHECK(fp32_to_fp16_bits(-std::numeric_limits<float>::infinity()) == 0xfc00u);
  CHECK(fp32_to_fp16_bits(-0.0f) == 0x8000u);
}

TEST_CASE("Half: midpoints of adjacent finite halves round to even, neighbours to nearest") {
  int mismatches = 0;
  for (uint32_t sign = 0; sign <= 0x8000u; sign += 0x8000u) {
    for (uint32_t lo = 0; lo < 0x7c00u; ++lo) {
      const uint16_t a = static_cast<uint16_t>(sign | lo);
      const uint16_t b = static_cast<uint16_t>(sign | (lo + 1));  // lo + 1 == 0x7c00 is Inf
      const double da = fp16_bits_to_fp32(a);
      const double db = fp16_bits_to_fp32(b);
      // The midpoint needs 12 significant bits, so it is exact in float (for the Inf pair the
      // "next value" is 2^16 and the midpoint is 65520).
      const float mid = static_cast<float>(lo + 1 == 0x7c00u ? (sign ? -65520.0 : 65520.0) : (da + db) / 2);
      const uint16_t even = (lo & 1u) ? b : a;
      const float toward_a = std::nextafter(mid, static_cast<float>(da));
      const float toward_b =
          std::nextafter(mid, sign ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
      if (fp32_to_fp16_bits(mid) != even) ++mismatches;
      if (fp32_to_fp16_bits(toward_a) != a) ++mismatches;
      if (fp32_to_fp16_bits(toward_b) != b) ++mismatches;
      if (fp64_to_fp16_bits(static_cast<double>(mid)) != even) ++mismatches;
      if (fp64_to_fp16_bits(std::nextafter(static_cast<double>(mid), da)) != a) ++mismatches;
      if (fp64_to_fp16_bits(std::nextafter(static_cast<double>(mid), static_cast<double>(toward_b))) != b) ++mismatches;
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("Half: random float bit patterns match _Float16 bitwise") {
  std::mt19937 rng(0x5eed1234u);
  int mismatches = 0;
  for (int i = 0; i < 4'000'000; ++i) {
    uint32_t u = rng();
    // Half the draws are steered into the exponent range where fp16 is normal or subnormal;
    // uniform bit patterns would mostly hit the trivial overflow and underflow branches.
    if (i & 1) u = (u & 0x807fffffu) | ((100u + (u >> 23) % 45u) << 23);
    const float f = float_from(u);
    const uint16_t ours = fp32_to_fp16_bits(f);
    const uint16_t ref = ref_fp32_to_fp16(f);
    if (ours != ref) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("Half: overflow to Inf at the 65520 boundary") {
  CHECK(Half(65504.0f).x == 0x7bffu);
  CHECK(Half(65519.99609375f).x == 0x7bffu);  // largest float below 65520
  CHECK(Half(65520.0f).x == 0x7c00u);
  CHECK(Half(-65520.0f).x == 0xfc00u);
  CHECK(Half(1e10f).x == 0x7c00u);
  CHECK(Half(std::numeric_limits<float>::max()).x == 0x7c00u);
  CHECK(Half(65519.999999999).x == 0x7bffu);
  CHECK(Half(65520.0).x == 0x7c00u);
  CHECK(Half(1e300).x == 0x7c00u);
  CHECK(Half(-1e300).x == 0xfc00u);
  // Subnormal and underflow edges.
  CHECK(Half(0x1p-24f).x == 0x0001u);
  CHECK(Half(0x1p-25f).x == 0x0000u);  // tie with zero -> even
  CHECK(Half(std::nextafter(0x1p-25f, 1.0f)).x == 0x0001u);
  CHECK(Half(0x1.8p-24f).x == 0x0002u);           // 1.5 units: tie -> even
  CHECK(Half(0x1p-14f - 0x1p-25f).x == 0x0400u);  // carries from subnormal into the first normal
  CHECK(Half(1e-30).x == 0x0000u);
  CHECK(Half(-1e-30).x == 0x8000u);
}

TEST_CASE("Half: fp64 -> fp16 rounds once") {
  // 1 + 2^-11 + 2^-40 is just above the tie between 1 and 1 + 2^-10. Through float the 2^-40
  // is lost, the tie goes to even (1.0); a single rounding gives 1 + 2^-10.
  const double d = 1.0 + 0x1p-11 + 0x1p-40;
  CHECK(fp32_to_fp16_bits(static_cast<float>(d)) == 0x3c00u);
  CHECK(fp64_to_fp16_bits(d) == 0x3c01u);
  CHECK(Half(d).x == 0x3c01u);
  CHECK(ref_fp64_to_fp16(d) == 0x3c01u);
  // Same trap in the subnormal range: just above the tie between 1 and 2 units of 2^-24.
  const double s = 0x1.8p-24 + 0x1p-60;
  CHECK(fp64_to_fp16_bits(s) == 0x0002u);
  CHECK(fp64_to_fp16_bits(0x1.8p-24 - 0x1p-60) == 0x0001u);

  std::mt19937_64 rng(0xd0b1e5eedull);
  int mismatches = 0;
  for (int i = 0; i < 2'000'000; ++i) {
    uint64_t u = rng();
    const int mode = i % 4;
    if (mode == 1) {
      // Exponents around the fp16 range, including subnormals and overflow.
      u = (u & 0x800fffffffffffffull) | (static_cast<uint64_t>(990 + (u >> 52) % 50) << 52);
    } else if (mode == 2 || mode == 3) {
      // A half midpoint nudged by a tiny relative amount: exactly the double-rounding hazard.
      const uint16_t h = static_cast<uint16_t>(u & 0x7bffu);
      const double a = fp16_bits_to_fp32(h);
      const double b = fp16_bits_to_fp32(static_cast<uint16_t>(h + 1));
      const double mid = (a + b) / 2;
      const int nudge = static_cast<int>((u >> 16) % 41) - 20;
      double v = mid;
      if (nudge > 0) v = mid + std::ldexp(mid, -30 - nudge);
      if (nudge < 0) v = mid - std::ldexp(mid, -30 + nudge);
      if (mode == 3) v = -v;
      u = std::bit_cast<uint64_t>(v);
    }
    const double v = std::bit_cast<double>(u);
    if (fp64_to_fp16_bits(v) != ref_fp64_to_fp16(v)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("Half: integral construction, arithmetic and comparisons") {
  CHECK(Half(0).x == 0x0000u);
  CHECK(Half(1).x == 0x3c00u);
  CHECK(Half(-2L).x == 0xc000u);
  CHECK(Half(2049u).x == 0x6800u);  // 2049 is a tie between 2048 and 2050 -> even (2048)
  CHECK(Half(70000LL).x == 0x7c00u);
  CHECK(Half(std::numeric_limits<int64_t>::min()).x == 0xfc00u);

  const Half a(1.5f), b(0.25f);
  CHECK(static_cast<float>(a + b) == 1.75f);
  CHECK(static_cast<float>(a - b) == 1.25f);
  CHECK(static_cast<float>(a * b) == 0.375f);
  CHECK(static_cast<float>(a / b) == 6.0f);
  CHECK(static_cast<float>(-a) == -1.5f);
  CHECK((-Half(0.0f)).x == 0x8000u);
  // The float result of a Half op is rounded back: 1 + 2^-11 ties to 1.
  CHECK((Half(1.0f) + Half(0x1p-11f)).x == 0x3c00u);

  static_assert(std::is_same_v<decltype(a + b), Half>);
  static_assert(std::is_same_v<decltype(a + 1.0f), float>);
  static_assert(std::is_same_v<decltype(1.0f * a), float>);
  static_assert(std::is_same_v<decltype(a - 1.0), double>);
  static_assert(std::is_same_v<decltype(2 * a), Half>);
  static_assert(std::is_same_v<decltype(a / int64_t{2}), Half>);
  CHECK(a + 1.0f == 2.5f);
  CHECK(static_cast<float>(2 * a) == 3.0f);

  Half c(1.0f);
  c += b;
  CHECK(c == Half(1.25f));
  c -= 0.25f;
  CHECK(c == 1.0f);
  c *= 3;
  CHECK(c == 3);
  c /= 2.0;
  CHECK(c == 1.5);
  c += Half(0.5f);
  c *= Half(2.0f);
  c /= Half(4.0f);
  c -= Half(1.0f);
  CHECK(c == 0);

  CHECK(a > b);
  CHECK(b < a);
  CHECK(a >= a);
  CHECK(a <= a);
  CHECK(a != b);
  CHECK(Half(0.0f) == -Half(0.0f));
  CHECK(1 < a);
  CHECK(a < 2.0);
  CHECK(0.25f <= b);
  CHECK(0.5f > b);
  const Half nan = std::numeric_limits<Half>::quiet_NaN();
  CHECK_FALSE(nan == nan);
  CHECK(nan != nan);
  CHECK_FALSE(nan < a);
  CHECK_FALSE(nan >= a);
}

TEST_CASE("Half: numeric_limits") {
  using L = std::numeric_limits<Half>;
  static_assert(L::is_specialized && L::is_signed && !L::is_integer && L::has_infinity && L::has_quiet_NaN);
  static_assert(L::digits == 11 && L::radix == 2);
  static_assert(L::max().x == 0x7bffu);
  CHECK(static_cast<float>(L::max()) == 65504.0f);
  CHECK(static_cast<float>(L::lowest()) == -65504.0f);
  CHECK(static_cast<float>(L::min()) == 0x1p-14f);
  CHECK(static_cast<float>(L::denorm_min()) == 0x1p-24f);
  CHECK(static_cast<float>(L::epsilon()) == 0x1p-10f);
  CHECK(static_cast<float>(L::round_error()) == 0.5f);
  CHECK(std::isinf(static_cast<float>(L::infinity())));
  CHECK(std::isnan(static_cast<float>(L::quiet_NaN())));
  CHECK(std::isnan(static_cast<float>(L::signaling_NaN())));
  // The documented exponent range must agree with the actual encodings.
  CHECK(static_cast<float>(L::min()) == std::ldexp(1.0f, L::min_exponent - 1));
  CHECK(static_cast<float>(L::max()) == std::ldexp(1.0f - std::ldexp(1.0f, -L::digits), L::max_exponent));
  CHECK(static_cast<float>(L::epsilon()) == std::ldexp(1.0f, 1 - L::digits));
}
