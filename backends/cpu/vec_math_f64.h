// fp64 exp and log written so a loop over them vectorizes, in the manner of vec_math.h's fp32
// functions: no branches that GCC cannot turn into blends, no calls, no tables, the exponent
// handled on the bits. Only the AVX2 and AVX-512 copies of the loops use them (vec_loops_f64.cpp):
// without 64-bit integer lanes (SSE2) they are slower than the C library's, which the baseline
// calls instead.
//
// Accuracy (tests/core/test_vec_math_f64.cpp, against long double on random sweeps of every
// binade): exp within 0.8 ulp (98% correctly rounded), log within 0.9 ulp (fdlibm's bound is
// 1), subnormal arguments and results included. Special
// values follow the C library's: exp(-inf) = 0, exp(inf) = inf, overflow inf, underflow 0;
// log(0) = -inf, log(x < 0) = NaN, log(inf) = inf; NaN in gives NaN out.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace anatomy::cpu::vec64 {

#define ANATOMY_VEC64_INLINE [[gnu::always_inline]] inline

ANATOMY_VEC64_INLINE uint64_t bits(double x) { return std::bit_cast<uint64_t>(x); }
ANATOMY_VEC64_INLINE double from_bits(uint64_t u) { return std::bit_cast<double>(u); }
// c ? a : b on the bits (vec_math.h's blend: a chain of `?:` would not vectorize).
ANATOMY_VEC64_INLINE double blend(bool c, double a, double b) {
  const uint64_t mask = uint64_t{0} - static_cast<uint64_t>(c);
  return from_bits((bits(a) & mask) | (bits(b) & ~mask));
}

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// ln 2 in two parts, the first with 32 significant bits, so n * kLn2Hi is exact for |n| < 2^20
// (fdlibm's split).
inline constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;

// (e^r - 1 - r) / r^2 for |r| <= ln2/2: the Taylor series to r^13 (the next term is below 2^-57
// of e^r).
ANATOMY_VEC64_INLINE double exp_series(double r) {
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  return p * r + 0.5;
}

// e^x = e^r 2^n, r = x - n ln2 (Cody-Waite), 2^n as two normal powers of two so that the product
// rounds once where the result is subnormal. x is clamped to [-746, 710], which changes no result
// (e^710 overflows, e^-746 is below half the smallest subnormal) and keeps n in [-1077, 1025];
// below -746 (and -inf) the result is exactly 0. NaN passes the clamps and propagates.
// e^r = 1 + r + r^2 P(r) is summed with the roundings of r = hi - lo and of 1 + r carried
// (Fast2Sum: each error is exact), so the one rounding left that matters is the last: 98% of
// results are the correctly rounded ones (e^1 is e's nearest double) where a plain 1 + q gives
// 90%.
ANATOMY_VEC64_INLINE double exp(double x_in) {
  constexpr double kLog2e = 1.4426950408889634074;
  constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52: n lands in the low mantissa bits
  double x = x_in > 710.0 ? 710.0 : x_in;
  x = x < -746.0 ? -746.0 : x;
  const double kn = x * kLog2e + kRound;
  const double n = kn - kRound;
  const double hi = x - n * kLn2Hi, lo = n * kLn2Lo;  // hi exact
  const double r = hi - lo;
  const double r_err = (hi - r) - lo;  // r + r_err = hi - lo exactly
  const double tail = exp_series(r) * (r * r) + r_err;
  const double one_r = 1.0 + r;
  const double one_r_err = (1.0 - one_r) + r;  // one_r + one_r_err = 1 + r exactly (|r| < 1)
  const double p = one_r + (one_r_err + tail);
  const int64_t ni = static_cast<int64_t>(bits(kn) - bits(kRound));
  const int64_t n1 = ni >> 1, n2 = ni - n1;
  const double s1 = from_bits(static_cast<uint64_t>(n1 + 1023) << 52);
  const double s2 = from_bits(static_cast<uint64_t>(n2 + 1023) << 52);
  return ((x_in < -746.0 ? 0.0 : p) * s1) * s2;
}

// log x = k ln2 + log(1 + f), x = 2^k (1 + f) with 1 + f in [sqrt(2)/2, sqrt(2)), and
// log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f / (2 + f): fdlibm's e_log.c with its minimax
// R. Subnormal x is first scaled by 2^54. k is formed as a double from the exponent's bits (the
// 11 bits as the low mantissa of 2^52): AVX-512F has no int64 -> double conversion.
ANATOMY_VEC64_INLINE double log(double x) {
  constexpr double kSqrt2 = 1.41421356237309504880;
  constexpr double kTwo52 = 4503599627370496.0;
  constexpr double kMinNormal = 2.2250738585072014e-308;
  const bool tiny = x < kMinNormal;
  const uint64_t u = bits(tiny ? x * 18014398509481984.0 : x);  // 2^54
  double k = from_bits(0x4330000000000000ull | (u >> 52)) - (kTwo52 + 1023.0);
  k = tiny ? k - 54.0 : k;
  double m = from_bits((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
  const bool upper = m > kSqrt2;
  m = upper ? m * 0.5 : m;
  k = upper ? k + 1.0 : k;
  const double f = m - 1.0;
  const double half_f2 = 0.5 * f * f;
  const double s = f / (2.0 + f);
  const double z = s * s, w = z * z;
  const double odd = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
  const double even =
      z * (6.666666666666735130e-01 +
           w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  double result = k * kLn2Hi - ((half_f2 - (s * (half_f2 + even + odd) + k * kLn2Lo)) - f);
  result = blend(x == 0.0, -kInf, result);
  result = blend(x < 0.0, kNaN, result);
  result = blend(x == kInf, kInf, result);
  return blend(x != x, x, result);
}

#undef ANATOMY_VEC64_INLINE

}  // namespace anatomy::cpu::vec64
