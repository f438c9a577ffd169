// Exhaustive and randomized checks of BFloat16 conversions against an independent reference.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <type_traits>

#include "anatomy/core/bfloat16.h"

using anatomy::BFloat16;
using anatomy::detail::bf16_bits_to_fp32;
using anatomy::detail::fp32_to_bf16_bits;
using anatomy::detail::fp64_to_bf16_bits;

namespace {

uint32_t bits32(float f) { return std::bit_cast<uint32_t>(f); }
float float_from(uint32_t u) { return std::bit_cast<float>(u); }
bool is_nan_bf16(uint16_t b) { return (b & 0x7fffu) > 0x7f80u; }

// Magnitude of a non-negative bf16 pattern; 0x7f80 stands for 2^128 so the midpoint between the
// largest finite value and "Inf" is the IEEE overflow threshold.
double magnitude(uint32_t p) { return p == 0x7f80u ? 0x1p128 : static_cast<double>(float_from(p << 16)); }

// Deliberately unlike the implementation: bracket |x| by binary search over the ordered
// non-negative patterns, then compare against the exact midpoint (9 bits, exact in double).
uint16_t ref_to_bf16(double x) {
  if (std::isnan(x)) return 0x7fc0u;
  const uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  const double ax = std::fabs(x);
  if (std::isinf(ax)) return static_cast<uint16_t>(sign | 0x7f80u);
  uint32_t lo = 0, hi = 0x7f80u;  // invariant: magnitude(lo) <= ax < magnitude(hi) or ax >= 2^128
  if (ax >= magnitude(hi)) return static_cast<uint16_t>(sign | 0x7f80u);
  while (hi - lo > 1) {
    const uint32_t m = (lo + hi) / 2;
    if (magnitude(m) <= ax) {
      lo = m;
    } else {
      hi = m;
    }
  }
  const double mid = (magnitude(lo) + magnitude(hi)) / 2;
  uint32_t p;
  if (ax < mid) {
    p = lo;
  } else if (ax > mid) {
    p = hi;
  } else {
    p = (lo & 1u) ? hi : lo;
  }
  return static_cast<uint16_t>(sign | p);
}

}  // namespace

TEST_CASE("BFloat16: bf16 -> fp32 is exactly bits << 16 for all 65536 patterns") {
  int mismatches = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t b = static_cast<uint16_t>(i);
    if (bits32(bf16_bits_to_fp32(b)) != (i << 16)) ++mismatches;
    if (bits32(static_cast<float>(BFloat16::from_bits(b))) != (i << 16)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("BFloat16: fp32 -> bf16 round trips every non-NaN pattern") {
  int mismatches = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t b = static_cast<uint16_t>(i);
    if (is_nan_bf16(b)) continue;
    const float f = bf16_bits_to_fp32(b);
    if (fp32_to_bf16_bits(f) != b) ++mismatches;
    if (fp64_to_bf16_bits(static_cast<double>(f)) != b) ++mismatches;
    if (BFloat16(f).x != b) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("BFloat16: midpoints of adjacent finite values round to even, neighbours to nearest") {
  int mismatches = 0;
  for (uint32_t sign = 0; sign <= 0x8000u; sign += 0x8000u) {
    for (uint32_t lo = 0; lo < 0x7f80u; ++lo) {
      const uint16_t a = static_cast<uint16_t>(sign | lo);
      const uint16_t b = static_cast<uint16_t>(sign | (lo + 1));  // lo + 1 == 0x7f80 is Inf
      const uint16_t even = (lo & 1u) ? b : a;
      // In float bits the midpoint is the pattern with only the highest dropped bit set, and
      // adjacent float patterns are one float ulp away from it.
      const uint32_t mid = (static_cast<uint32_t>(a) << 16) | 0x8000u;
      if (fp32_to_bf16_bits(float_from(mid)) != even) ++mismatches;
      if (fp32_to_bf16_bits(float_from(mid - 1)) != a) ++mismatches;
      if (fp32_to_bf16_bits(float_from(mid + 1)) != b) ++mismatches;
      if (ref_to_bf16(float_from(mid)) != even) ++mismatches;  // the reference agrees on ties
      const double dmid = float_from(mid);
      if (fp64_to_bf16_bits(dmid) != even) ++mismatches;
      if (fp64_to_bf16_bits(std::nextafter(dmid, 0.0)) != a) ++mismatches;
      if (fp64_to_bf16_bits(std::nextafter(dmid, sign ? -1e300 : 1e300)) != b) ++mismatches;
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("BFloat16: random floats match the reference") {
  std::mt19937 rng(0xbf16bf16u);
  int mismatches = 0;
  for (int i = 0; i < 3'000'000; ++i) {
    const float f = float_from(rng());
    if (std::isnan(f)) continue;
    if (fp32_to_bf16_bits(f) != ref_to_bf16(f)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("BFloat16: NaN stays a quiet NaN, Inf stays Inf, overflow threshold") {
  // Every float NaN, including those whose payload lies entirely in the truncated low bits.
  int bad_nans = 0;
  for (uint32_t m = 1; m < (1u << 23); ++m) {
    for (const uint32_t sign : {0u, 0x80000000u}) {
      const uint16_t b = fp32_to_bf16_bits(float_from(sign | 0x7f800000u | m));
      if (!is_nan_bf16(b) || !(b & 0x0040u) || (b & 0x8000u) != (sign >> 16)) ++bad_nans;
    }
  }
  CHECK(bad_nans == 0);
  CHECK(fp32_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()) == 0x7fc0u);
  CHECK(fp64_to_bf16_bits(std::bit_cast<double>(0x7ff0000000000001ull)) == 0x7fc0u);
  CHECK(fp64_to_bf16_bits(std::bit_cast<double>(0xfff0000000000001ull)) == 0xffc0u);

  CHECK(BFloat16(std::numeric_limits<float>::infinity()).x == 0x7f80u);
  CHECK(BFloat16(-std::numeric_limits<float>::infinity()).x == 0xff80u);
  CHECK(BFloat16(std::numeric_limits<double>::infinity()).x == 0x7f80u);

  // Largest bf16 is (2 - 2^-7) * 2^127; adding half an ulp (2^120) reaches the tie with 2^128,
  // which goes to the even side: Inf.
  const double max_bf16 = static_cast<double>(bf16_bits_to_fp32(0x7f7fu));
  const float max_plus_half_ulp = static_cast<float>(max_bf16 + 0x1p119);
  CHECK(bits32(max_plus_half_ulp) == 0x7f7f8000u);
  CHECK(BFloat16(max_plus_half_ulp).x == 0x7f80u);
  CHECK(BFloat16(std::nextafter(max_plus_half_ulp, 0.0f)).x == 0x7f7fu);
  CHECK(BFloat16(std::numeric_limits<float>::max()).x == 0x7f80u);
  CHECK(BFloat16(max_bf16 + 0x1p119).x == 0x7f80u);
  CHECK(BFloat16(std::nextafter(max_bf16 + 0x1p119, 0.0)).x == 0x7f7fu);
  CHECK(BFloat16(-1e300).x == 0xff80u);
  CHECK(BFloat16(1e-300).x == 0x0000u);
  CHECK(BFloat16(-1e-300).x == 0x8000u);
}

TEST_CASE("BFloat16: fp64 -> bf16 rounds once") {
  // 1 + 2^-8 + 2^-30: through float the 2^-30 is lost and the tie goes to 1.0; once: 1 + 2^-7.
  const double d = 1.0 + 0x1p-8 + 0x1p-30;
  CHECK(fp32_to_bf16_bits(static_cast<float>(d)) == 0x3f80u);
  CHECK(fp64_to_bf16_bits(d) == 0x3f81u);
  CHECK(BFloat16(d).x == 0x3f81u);
  // Same trap in the subnormal range (unit 2^-133), and below what float can even represent.
  CHECK(fp64_to_bf16_bits(0x1.8p-133 + 0x1p-170) == 0x0002u);
  CHECK(fp64_to_bf16_bits(0x1.8p-133 - 0x1p-170) == 0x0001u);
  CHECK(fp64_to_bf16_bits(0x1p-134) == 0x0000u);
  CHECK(fp64_to_bf16_bits(0x1p-134 + 0x1p-180) == 0x0001u);

  std::mt19937_64 rng(0xb16b00b5ull);
  int mismatches = 0;
  for (int i = 0; i < 1'500'000; ++i) {
    uint64_t u = rng();
    const int mode = i % 4;
    if (mode == 1) {
      // Exponents around bf16's range, including subnormals and overflow.
      u = (u & 0x800fffffffffffffull) | (static_cast<uint64_t>(880 + (u >> 52) % 280) << 52);
    } else if (mode >= 2) {
      // A bf16 midpoint nudged by a tiny relative amount.
      const uint32_t p = static_cast<uint32_t>(u % 0x7f80u);
      const double mid = (magnitude(p) + magnitude(p + 1)) / 2;
      const int nudge = static_cast<int>((u >> 20) % 61) - 30;
      double v = mid;
      if (nudge > 0) v = mid + std::ldexp(mid, -25 - nudge);
      if (nudge < 0) v = mid - std::ldexp(mid, -25 + nudge);
      if (mode == 3) v = -v;
      u = std::bit_cast<uint64_t>(v);
    }
    const double v = std::bit_cast<double>(u);
    if (std::isnan(v)) continue;
    if (fp64_to_bf16_bits(v) != ref_to_bf16(v)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("BFloat16: integral construction, arithmetic and comparisons") {
  CHECK(BFloat16(0).x == 0x0000u);
  CHECK(BFloat16(1).x == 0x3f80u);
  CHECK(BFloat16(-3).x == 0xc040u);
  CHECK(BFloat16(257).x == 0x4380u);   // tie between 256 and 258 -> even (256)
  CHECK(BFloat16(259u).x == 0x4382u);  // tie between 258 and 260 -> even (260)
  // 2^62 + 2^54 + 1 is just above a bf16 tie; a plain int64 -> double conversion would drop the
  // +1 and then round the tie down to 2^62.
  const int64_t big = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;
  CHECK(BFloat16(big).x == ref_to_bf16(0x1p62 + 0x1p54 + 0x1p40));
  CHECK(BFloat16(big).x == 0x5e81u);
  CHECK(BFloat16(-big).x == 0xde81u);
  CHECK(BFloat16(std::numeric_limits<int64_t>::min()).x == 0xdf00u);
  CHECK(BFloat16(std::numeric_limits<uint64_t>::max()).x == 0x5f80u);

  const BFloat16 a(1.5f), b(0.25f);
  CHECK(static_cast<float>(a + b) == 1.75f);
  CHECK(static_cast<float>(a - b) == 1.25f);
  CHECK(static_cast<float>(a * b) == 0.375f);
  CHECK(static_cast<float>(a / b) == 6.0f);
  CHECK(static_cast<float>(-a) == -1.5f);
  CHECK((-BFloat16(0.0f)).x == 0x8000u);
  CHECK((BFloat16(1.0f) + BFloat16(0x1p-8f)).x == 0x3f80u);  // tie rounds back to even

  static_assert(std::is_same_v<decltype(a + b), BFloat16>);
  static_assert(std::is_same_v<decltype(a + 1.0f), float>);
  static_assert(std::is_same_v<decltype(1.0 * a), double>);
  static_assert(std::is_same_v<decltype(a * 2), BFloat16>);

  BFloat16 c(1.0f);
  c += b;
  CHECK(c == BFloat16(1.25f));
  c -= 0.25f;
  CHECK(c == 1.0f);
  c *= 3;
  CHECK(c == 3);
  c /= 2.0;
  CHECK(c == 1.5);
  c += BFloat16(0.5f);
  c *= BFloat16(2.0f);
  c /= BFloat16(4.0f);
  c -= BFloat16(1.0f);
  CHECK(c == 0);

  CHECK(a > b);
  CHECK(b < a);
  CHECK(a >= a);
  CHECK(a <= a);
  CHECK(a != b);
  CHECK(2.0 > a);
  CHECK(BFloat16(0.0f) == -BFloat16(0.0f));
  const BFloat16 nan = std::numeric_limits<BFloat16>::quiet_NaN();
  CHECK_FALSE(nan == nan);
  CHECK(nan != nan);
  CHECK_FALSE(nan <= a);
}

TEST_CASE("BFloat16: numeric_limits") {
  using L = std::numeric_limits<BFloat16>;
  static_assert(L::is_specialized && L::is_signed && !L::is_integer && L::has_infinity && L::has_quiet_NaN);
  static_assert(L::digits == 8 && L::radix == 2);
  CHECK(static_cast<float>(L::max()) == 0x1.fep127f);
  CHECK(static_cast<float>(L::lowest()) == -0x1.fep127f);
  CHECK(static_cast<float>(L::min()) == std::numeric_limits<float>::min());
  CHECK(static_cast<float>(L::denorm_min()) == 0x1p-133f);
  CHECK(static_cast<float>(L::epsilon()) == 0x1p-7f);
  CHECK(static_cast<float>(L::round_error()) == 0.5f);
  CHECK(std::isinf(static_cast<float>(L::infinity())));
  CHECK(std::isnan(static_cast<float>(L::quiet_NaN())));
  CHECK(std::isnan(static_cast<float>(L::signaling_NaN())));
  CHECK(static_cast<float>(L::min()) == std::ldexp(1.0f, L::min_exponent - 1));
  CHECK(static_cast<double>(L::max()) == std::ldexp(1.0 - std::ldexp(1.0, -L::digits), L::max_exponent));
  CHECK(static_cast<float>(L::epsilon()) == std::ldexp(1.0f, 1 - L::digits));
}
