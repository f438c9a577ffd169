// fp64 transcendental functions written so a loop over them vectorizes, in the manner of
// vec_math.h's fp32 functions: no branches that GCC cannot turn into blends, no calls, no tables,
// the exponent handled on the bits. Only the AVX2 and AVX-512 copies of the loops use them
// (vec_loops_f64.cpp): without 64-bit integer lanes (SSE2) they are slower than the C library's,
// which the baseline calls instead.
//
// Accuracy (tests/core/test_vec_math_f64.cpp, against long double on random sweeps of every
// binade, subnormal arguments and results included; the bounds there): exp within 0.8 ulp (98%
// correctly rounded), log within 0.9 ulp (fdlibm's bound is 1), the others within 0.5 to 5.
// Special values follow the C library's: exp(-inf) = 0, exp(inf) = inf, overflow inf, underflow
// 0; log(0) = -inf, log(x < 0) = NaN, log(inf) = inf; NaN in gives NaN out.
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
inline constexpr double kLog2e = 1.4426950408889634074;

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

// e^(hi - lo) for |hi - lo| <= ln2/2 + a little, hi exact and lo its small correction: e^r =
// 1 + r + r^2 P(r) summed with the roundings of r = hi - lo and of 1 + r carried (Fast2Sum: each
// error is exact), so the one rounding left that matters is the last: 98% of exp's results are the
// correctly rounded ones (e^1 is e's nearest double) where a plain 1 + q gives 90%.
ANATOMY_VEC64_INLINE double exp_reduced(double hi, double lo) {
  const double r = hi - lo;
  const double r_err = (hi - r) - lo;  // r + r_err = hi - lo exactly
  const double tail = exp_series(r) * (r * r) + r_err;
  const double one_r = 1.0 + r;
  const double one_r_err = (1.0 - one_r) + r;  // one_r + one_r_err = 1 + r exactly (|r| < 1)
  return one_r + (one_r_err + tail);
}

// p 2^n for n in [-1080, 1025], as two normal powers of two so that the product rounds once where
// the result is subnormal, and overflows to inf on its own.
ANATOMY_VEC64_INLINE double times_pow2(double p, int64_t n) {
  const int64_t n1 = n >> 1, n2 = n - n1;
  const double s1 = from_bits(static_cast<uint64_t>(n1 + 1023) << 52);
  const double s2 = from_bits(static_cast<uint64_t>(n2 + 1023) << 52);
  return (p * s1) * s2;
}

// Adding 1.5 * 2^52 rounds to an integer held in the low mantissa bits: n without a
// double-to-int conversion (which NaN would make undefined), read back by rounded_int.
inline constexpr double kRound = 6755399441055744.0;
ANATOMY_VEC64_INLINE int64_t rounded_int(double kn) { return static_cast<int64_t>(bits(kn) - bits(kRound)); }

// e^x = e^r 2^n, r = x - n ln2 (Cody-Waite). x is clamped to [-746, 710], which changes no result
// (e^710 overflows, e^-746 is below half the smallest subnormal) and keeps n in [-1077, 1025];
// below -746 (and -inf) the result is exactly 0. NaN passes the clamps and propagates.
ANATOMY_VEC64_INLINE double exp(double x_in) {
  double x = x_in > 710.0 ? 710.0 : x_in;
  x = x < -746.0 ? -746.0 : x;
  const double kn = x * kLog2e + kRound;
  const double n = kn - kRound;
  const double p = exp_reduced(x - n * kLn2Hi, n * kLn2Lo);  // x - n ln2_hi is exact
  return times_pow2(x_in < -746.0 ? 0.0 : p, rounded_int(kn));
}

// e^(hi + tail) for a finite hi, exact, and |tail| < 1 (erfc's e^-t^2 with t^2 split exactly): n
// is taken from their sum and hi - n ln2_hi stays exact, so tail's bits are not lost to a
// rounding of the sum. Below -746 the result is 0, as exp's; exp's clamp on the sum keeps n in
// range. (exp itself is not this with tail = 0: an infinite hi would need the clamp applied to
// hi too, two more selects in the hottest function.)
ANATOMY_VEC64_INLINE double exp_sum(double hi, double tail) {
  const double sum = hi + tail;
  double x = sum > 710.0 ? 710.0 : sum;
  x = x < -746.0 ? -746.0 : x;
  const double kn = x * kLog2e + kRound;
  const double n = kn - kRound;
  const double p = exp_reduced(hi - n * kLn2Hi, n * kLn2Lo - tail);
  return times_pow2(sum < -746.0 ? 0.0 : p, rounded_int(kn));
}

// 2^x = 2^n e^(r ln2), n = x rounded and r = x - n exact in [-1/2, 1/2]. r ln2 goes to
// exp_reduced as an exact head and a small tail: r's top 21 bits times ln2's first 32 (exact),
// and the rest. x is clamped to [-1076, 1025] (2^-1076 is below half the smallest subnormal,
// 2^1025 overflows); integers give 2^n exactly.
ANATOMY_VEC64_INLINE double exp2(double x_in) {
  double x = x_in > 1025.0 ? 1025.0 : x_in;
  x = x < -1076.0 ? -1076.0 : x;
  const double kn = x + kRound;
  const double n = kn - kRound;
  const double r = x - n;
  const double r_hi = from_bits(bits(r) & 0xffffffff00000000ull);
  const double lo = -(r_hi * kLn2Lo + (r - r_hi) * (kLn2Hi + kLn2Lo));
  const double p = exp_reduced(r_hi * kLn2Hi, lo);
  return times_pow2(x_in < -1076.0 ? 0.0 : p, rounded_int(kn));
}

// e^x - 1 = 2^n (e^r - 1 + (1 - 2^-n)): e^r - 1 = r + (r^2 P(r) + r's rounding), and the sum with
// c = 1 - 2^-n (exact for |n| <= 53, and off by at most 2^n beyond, below half an ulp of the
// result) by Fast2Sum (|c| >= 1/2 > |r|, or c = 0), so small x loses nothing to cancellation.
// Below -40 the result is -1 to double precision; x is clamped to 710 (overflow).
ANATOMY_VEC64_INLINE double expm1(double x_in) {
  double x = x_in > 710.0 ? 710.0 : x_in;
  x = x < -40.0 ? -40.0 : x;
  const double kn = x * kLog2e + kRound;
  const double n = kn - kRound;
  const double hi = x - n * kLn2Hi, lo = n * kLn2Lo;
  const double r = hi - lo;
  const double r_err = (hi - r) - lo;
  const double tail = exp_series(r) * (r * r) + r_err;
  const int64_t ni = rounded_int(kn);
  const int64_t nc = ni > 60 ? 60 : ni;  // 1 - 2^-n is 1 beyond
  const double c = 1.0 - from_bits(static_cast<uint64_t>(1023 - nc) << 52);
  const double s = c + r;
  const double s_err = (c - s) + r;
  const double result = times_pow2(s + (s_err + tail), ni);
  return blend(x_in < -40.0, -1.0, blend(x_in == 0.0, x_in, result));  // -0 stays -0
}

// m * sigmoid(z) = m / (1 + e^-z) for z >= 0, m e^z / (1 + e^z) below: e^-|z| <= 1 never
// overflows. Where e^z is near or below the smallest normal (z < -700) it is taken as e^(z + 64)
// times e^-64 last, so that m e^z rounds once into the subnormals instead of multiplying the
// rounding of a subnormal e^z by m (silu(-744) would be hundreds of ulp off). -inf gives m * 0,
// +inf gives m, NaN NaN.
ANATOMY_VEC64_INLINE double mul_sigmoid(double m, double z) {
  constexpr double kExpMinus64 = 1.6038108905486378e-28;  // e^-64
  const bool negative = z < 0.0;
  const double minus_abs = negative ? z : -z;
  const bool deep = minus_abs < -700.0;
  const double e = exp(deep ? minus_abs + 64.0 : minus_abs);  // the sum is exact there
  const double ratio = m / (1.0 + (deep ? 0.0 : e));
  return negative ? (e * ratio) * (deep ? kExpMinus64 : 1.0) : ratio;
}

// m * sigmoid(z + zl), with zl a low part of z below its ulp: e^(-|z| - lo) as e^-|z| (1 - lo),
// exact to the rounding there (|lo| < 1e-13). For arguments computed in two parts, where the
// rounding of z alone would be multiplied by |z| in the tail (gelu_tanh).
ANATOMY_VEC64_INLINE double mul_sigmoid(double m, double z, double zl) {
  constexpr double kExpMinus64 = 1.6038108905486378e-28;  // e^-64
  const bool negative = z < 0.0;
  const double minus_abs = negative ? z : -z;
  const double minus_lo = negative ? zl : -zl;
  const bool deep = minus_abs < -700.0;
  double e = exp(deep ? minus_abs + 64.0 : minus_abs);  // the sum is exact there
  e = e + e * minus_lo;
  const double ratio = m / (1.0 + (deep ? 0.0 : e));
  return negative ? (e * ratio) * (deep ? kExpMinus64 : 1.0) : ratio;
}

ANATOMY_VEC64_INLINE double sigmoid(double x) { return mul_sigmoid(1.0, x); }
ANATOMY_VEC64_INLINE double silu(double x) { return mul_sigmoid(x, x); }

// tanh |x| = -t / (t + 2) with t = e^-2|x| - 1 below 1, and 1 - 2 / (t + 2) with t = e^2|x| - 1
// above (fdlibm's s_tanh.c, one expm1 and one division either way); 1 past 22, where
// 2 / (e^44 + 1) is below half an ulp of 1. The sign is x's (tanh(-0) = -0).
ANATOMY_VEC64_INLINE double tanh(double x) {
  const double ax = from_bits(bits(x) & 0x7fffffffffffffffull);
  const double a = ax > 22.0 ? 22.0 : ax;  // NaN passes
  const bool small = a < 1.0;
  const double t = expm1(small ? -2.0 * a : 2.0 * a);
  const double q = (small ? -t : 2.0) / (t + 2.0);
  const double z = small ? q : 1.0 - q;
  return from_bits(bits(z) | (bits(x) & 0x8000000000000000ull));
}

// x = 2^k m with m in [sqrt(2)/2, sqrt(2)) and f = m - 1, for log and log2: k as a double, f, and
// the pieces of log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f / (2 + f) (fdlibm's e_log.c with
// its minimax R). Subnormal x is first scaled by 2^54. k is formed as a double from the exponent's
// bits (the 11 bits as the low mantissa of 2^52): AVX-512F has no int64 -> double conversion.
// Zero, negative, infinite and NaN x give meaningless parts (log_specials replaces those).
struct LogParts {
  double k, f, half_f2, s, poly;  // log(1 + f) = f - (half_f2 - s (half_f2 + poly))
};

ANATOMY_VEC64_INLINE LogParts log_parts(double x) {
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
  LogParts parts;
  parts.k = k;
  parts.f = m - 1.0;
  parts.half_f2 = 0.5 * parts.f * parts.f;
  parts.s = parts.f / (2.0 + parts.f);
  const double z = parts.s * parts.s, w = z * z;
  const double odd = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
  const double even =
      z * (6.666666666666735130e-01 +
           w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  parts.poly = even + odd;
  return parts;
}

// The C library's special values of log and log2: -inf at 0, NaN below, inf at inf, NaN for NaN.
ANATOMY_VEC64_INLINE double log_specials(double x, double result) {
  result = blend(x == 0.0, -kInf, result);
  result = blend(x < 0.0, kNaN, result);
  result = blend(x == kInf, kInf, result);
  return blend(x != x, x, result);
}

// log x = k ln2 + log(1 + f), ln2 in two parts so k ln2_hi is exact.
ANATOMY_VEC64_INLINE double log(double x) {
  const LogParts p = log_parts(x);
  const double result = p.k * kLn2Hi - ((p.half_f2 - (p.s * (p.half_f2 + p.poly) + p.k * kLn2Lo)) - p.f);
  return log_specials(x, result);
}

// log2 x = k + log(1 + f) / ln2 (FreeBSD's e_log2.c): log(1 + f) as hi (its top 21 bits, so hi
// times 1/ln2's first 33 bits is exact) plus lo, and k added with its rounding carried. A power of
// two gives its exponent exactly.
ANATOMY_VEC64_INLINE double log2(double x) {
  constexpr double kInvLn2Hi = 1.44269504072144627571e+00, kInvLn2Lo = 1.67517131648865118353e-10;
  const LogParts p = log_parts(x);
  const double hi = from_bits(bits(p.f - p.half_f2) & 0xffffffff00000000ull);
  const double lo = (p.f - hi) - p.half_f2 + p.s * (p.half_f2 + p.poly);
  const double val_hi = hi * kInvLn2Hi;
  const double val_lo = (lo + hi) * kInvLn2Lo + lo * kInvLn2Hi;
  const double w = p.k + val_hi;
  return log_specials(x, (val_lo + ((p.k - w) + val_hi)) + w);
}

// log(1 + x) = log(u) - ((u - 1) - x) / u with u = 1 + x rounded: the second term puts back what
// the rounding of u lost (u - 1 is exact; the term is exactly x's part where u = 1). -1 gives
// -inf and inf inf, which the correction alone would make NaN, and -0 gives -0.
ANATOMY_VEC64_INLINE double log1p(double x) {
  const double u = 1.0 + x;
  const double result = log(u) - ((u - 1.0) - x) / u;
  return blend(u == 0.0, -kInf, blend(x == kInf, kInf, blend(x == 0.0, x, result)));  // -0 stays -0
}

// erf and erfc after fdlibm's s_erf.c (its rational approximations on [0, 0.84375),
// [0.84375, 1.25), [1.25, 1/0.35) and [1/0.35, 28)): every interval's numerator and denominator
// computed, the element's pair selected, and one division (divisions, not the polynomials, are
// what these cost). a >= 0 throughout.
namespace erf_detail {

struct Ratio {
  double num, den;
};

// erf(a) = a + a y for a < 0.84375, y = num / den.
ANATOMY_VEC64_INLINE Ratio small_y(double a) {
  const double z = a * a;
  const double r =
      1.28379167095512558561e-01 +
      z * (-3.25042107247001499370e-01 +
           z * (-2.84817495755985104766e-02 + z * (-5.77027029648944159157e-03 + z * -2.37630166566501626084e-05)));
  const double q =
      1.0 +
      z * (3.97917223959155352819e-01 +
           z * (6.50222499887672944485e-02 +
                z * (5.08130628187576562776e-03 + z * (1.32494738004321644526e-04 + z * -3.96022827877536812320e-06))));
  return {r, q};
}

// erf(a) = erx + P/Q on [0.84375, 1.25), s = a - 1.
inline constexpr double kErx = 8.45062911510467529297e-01;
ANATOMY_VEC64_INLINE Ratio mid_p_over_q(double a) {
  const double s = a - 1.0;
  const double p = -2.36211856075265944077e-03 +
                   s * (4.14856118683748331666e-01 +
                        s * (-3.72207876035701323847e-01 +
                             s * (3.18346619901161753674e-01 +
                                  s * (-1.10894694282396677476e-01 +
                                       s * (3.54783043256182359371e-02 + s * -2.16637559486879084300e-03)))));
  const double q = 1.0 + s * (1.06420880400844228286e-01 +
                              s * (5.40397917702171048937e-01 +
                                   s * (7.18286544141962662868e-02 +
                                        s * (1.26171219808761642112e-01 +
                                             s * (1.36370839120290507362e-02 + s * 1.19844998467991074170e-02)))));
  return {p, q};
}

// R/S with s = 1 / a^2 for a in [1.25, 28): erfc(a) = e^(-a^2 - 0.5625 + R/S) / a. The two
// intervals' coefficients are selected per element (one polynomial pair).
ANATOMY_VEC64_INLINE Ratio tail_r_over_s(double a) {
  const bool b = a >= 2.857142857142857;  // 1 / 0.35
  const double s = 1.0 / (a * a);
  const double r = (b ? -9.86494292470009928597e-03 : -9.86494403484714822705e-03) +
                   s * ((b ? -7.99283237680523006574e-01 : -6.93858572707181764372e-01) +
                        s * ((b ? -1.77579549177547519889e+01 : -1.05586262253232909814e+01) +
                             s * ((b ? -1.60636384855821916062e+02 : -6.23753324503260060396e+01) +
                                  s * ((b ? -6.37566443368389627722e+02 : -1.62396669462573470355e+02) +
                                       s * ((b ? -1.02509513161107724954e+03 : -1.84605092906711035994e+02) +
                                            s * ((b ? -4.83519191608651397019e+02 : -8.12874355063065934246e+01) +
                                                 s * (b ? 0.0 : -9.81432934416914548592e+00)))))));
  const double q =
      1.0 + s * ((b ? 3.03380607434824582924e+01 : 1.96512716674392571292e+01) +
                 s * ((b ? 3.25792512996573918826e+02 : 1.37657754143519042600e+02) +
                      s * ((b ? 1.53672958608443695994e+03 : 4.34565877475229228821e+02) +
                           s * ((b ? 3.19985821950859553908e+03 : 6.45387271733267880336e+02) +
                                s * ((b ? 2.55305040643316442583e+03 : 4.29008140027567833386e+02) +
                                     s * ((b ? 4.74528541206955367215e+02 : 1.08635005541779435134e+02) +
                                          s * ((b ? -2.24409524465858183362e+01 : 6.57024977031928170135e+00) +
                                               s * (b ? 0.0 : -6.04244152148580987438e-02))))))));
  return {r, q};
}

// The element's interval's ratio, divided once: small (a < 0.84375), mid (< 1.25) or tail.
ANATOMY_VEC64_INLINE double select_ratio(double a, Ratio small, Ratio mid, Ratio tail) {
  const double num = a < 0.84375 ? small.num : (a < 1.25 ? mid.num : tail.num);
  const double den = a < 0.84375 ? small.den : (a < 1.25 ? mid.den : tail.den);
  return num / den;
}

// a with its low 32 bits cleared: its square is exact.
ANATOMY_VEC64_INLINE double high_part(double a) { return from_bits(bits(a) & 0xffffffff00000000ull); }

}  // namespace erf_detail

// erf(x), within about 1 ulp: fdlibm's intervals; 1 beyond |x| = 6, the sign x's, NaN NaN.
ANATOMY_VEC64_INLINE double erf(double x) {
  using namespace erf_detail;
  const double a = from_bits(bits(x) & 0x7fffffffffffffffull);
  // The tail on [1.25, 6): erfc(a) = e^(-z^2 - 0.5625) e^((z - a)(z + a) + R/S) / a with z = a's
  // high part (fdlibm's), in one exponential.
  const double ac = a < 1.25 ? 1.25 : (a > 6.0 ? 6.0 : a);
  const double y = select_ratio(a, small_y(a < 0.84375 ? a : 0.0), mid_p_over_q(a < 1.25 ? a : 1.0), tail_r_over_s(ac));
  const double z = high_part(ac);
  const double r = exp_sum(-z * z - 0.5625, (z - ac) * (z + ac) + y);
  double v = a < 0.84375 ? a + a * y : (a < 1.25 ? kErx + y : 1.0 - r / ac);
  v = a < 6.0 ? v : 1.0;
  const double result = from_bits(bits(v) | (bits(x) & 0x8000000000000000ull));
  return x != x ? x : result;
}

// gelu's tanh form, 0.5 x (1 + tanh(b (x + k x^3))) with b = sqrt(2 / pi) and k = 0.044715 as
// doubles, computed as x sigmoid(z) with z = 2b x (1 + k x^2): no cancellation of 1 + tanh in the
// negative tail. There e^z is the whole value, and a z off by one rounding at |z| = 700 would put
// the result hundreds of ulp off, so z is carried in two parts: x^2, 1 + k x^2 and 2b x each with
// its rounding error from an FMA, and their product's. Every product that meets a sum is an
// explicit FMA, so -ffp-contract=fast (the wide copies' flag) cannot change one part without the
// other; t - 1 is exact for t >= 1. Beyond |x| = 30 the result is x (the sigmoid rounds to 1) or
// x * 0 (-0; NaN for -inf, as x sigmoid(z) is there).
ANATOMY_VEC64_INLINE double gelu_tanh(double x) {
  constexpr double kTwoBeta = 2 * 0.79788456080286535588, kKappa = 0.044715;
  const double c = x > 30.0 ? 30.0 : (x < -30.0 ? -30.0 : x);  // NaN passes
  const double p = c * c, pe = __builtin_fma(c, c, -p);        // c^2 = p + pe
  const double t = __builtin_fma(kKappa, p, 1.0);              // 1 + k c^2 = t + te
  const double te = __builtin_fma(kKappa, p, -(t - 1.0)) + kKappa * pe;
  const double r = kTwoBeta * c, re = __builtin_fma(kTwoBeta, c, -r);  // 2b c = r + re
  const double z = r * t, ze = __builtin_fma(r, t, -z) + (r * te + re * t);
  const double y = mul_sigmoid(c, z, ze);
  return x > 30.0 ? x : (x < -30.0 ? x * 0.0 : y);
}

// gelu(x) = x Phi(x) = x erfc(-x / sqrt 2) / 2, from fdlibm's intervals of erf and erfc at
// a = |x| / sqrt 2. In the tail, x erfc(a) / 2 = -e^(-a^2 - 0.5625 + R/S) / sqrt 2 for negative x
// (x / a = -sqrt 2: no division), with a^2 = x^2 / 2 from x's exact square, not from the rounded
// a (whose rounding e^-a^2 would multiply by 2a^2, 1700 ulp at x = -37); below -700 the
// exponential is taken as e^(... + 64) times e^-64 last, so that the result rounds once into
// the subnormals. Positive x: x - that. -inf gives NaN (-inf * 0), as x Phi(x) does.
ANATOMY_VEC64_INLINE double gelu(double x) {
  using namespace erf_detail;
  constexpr double kRsqrt2 = 0.70710678118654752440, kExpMinus64 = 1.6038108905486378e-28;  // e^-64
  const double ax = from_bits(bits(x) & 0x7fffffffffffffffull);
  const double a = ax * kRsqrt2;
  const double half_x = 0.5 * x;
  const bool negative = x < 0.0;
  const double xa = a < 1.25 ? 1.768 : (a > 28.0 ? 39.6 : ax);  // |x|, kept in the tail's range
  const double as = a < 0.84375 ? a : 0.0;
  const double y = select_ratio(a, small_y(as), mid_p_over_q(a < 1.25 ? a : 1.0), tail_r_over_s(xa * kRsqrt2));
  // a < 0.84375: erf(a) = a + a y; erfc(a) = 1 - erf(a), or 1/2 - (a y + (a - 1/2)) above 1/4
  // (fdlibm's, no cancellation there).
  const double ay = as * y;
  const double erf_small = as + ay;
  const double erfc_small = as < 0.25 ? 1.0 - erf_small : 0.5 - (ay + (as - 0.5));
  const double small = negative ? half_x * erfc_small : half_x + half_x * erf_small;
  // [0.84375, 1.25): erf = erx + P/Q, erfc = (1 - erx) - P/Q.
  const double mid = negative ? half_x * ((1.0 - kErx) - y) : half_x * (1.0 + (kErx + y));
  // [1.25, 28): the tail, e^(-x^2/2 - 0.5625 + R/S) with x^2/2 = xh^2/2 + (x - xh)(x + xh)/2.
  const double xh = high_part(xa);
  const double hi = -0.5 * (xh * xh) - 0.5625;
  const bool deep = hi < -700.0;
  const double e = exp_sum(deep ? hi + 64.0 : hi, -0.5 * ((xa - xh) * (xa + xh)) + y);
  const double tail = (e * kRsqrt2) * (deep ? kExpMinus64 : 1.0);  // -x erfc(a) / 2 for x < 0
  const double large = negative ? -tail : x - tail;
  const double v = a < 0.84375 ? small : (a < 1.25 ? mid : large);
  return (x != x || x == -kInf) ? kNaN : v;
}

// sin, cos and tan for |x| <= kTrigMax: x = n pi/2 + y, y = y0 + y1 in [-pi/4, pi/4], with pi/2 in
// four parts (fdlibm's e_rem_pio2.c: the first three of 33 bits, so their products with n < 2^20
// are exact) and every subtraction's rounding carried (TwoSum), so |x| within 1e-15 of a multiple
// of pi/2 still gives y to double precision; then fdlibm's kernels of sin and cos with the tail
// y1. Beyond kTrigMax (and for inf and NaN) the loops call the C library (vec_loops_f64.cpp); the
// reduction still clamps, so that nothing meaningless is computed there.
inline constexpr double kTrigMax = 1048576.0;  // 2^20

ANATOMY_VEC64_INLINE void two_diff(double a, double b, double& s, double& e) {
  s = a - b;
  const double bb = a - s;
  e = (a - (s + bb)) + (bb - b);
}

struct Reduced {
  double sin, cos;  // of y
  int64_t n;        // the quadrant, n mod 4
};

ANATOMY_VEC64_INLINE Reduced trig_reduce(double ax) {
  constexpr double kInvPio2 = 6.36619772367581382433e-01;
  constexpr double kPio2_1 = 1.57079632673412561417e+00, kPio2_2 = 6.07710050630396597660e-11,
                   kPio2_3 = 2.02226624871116645580e-21, kPio2_3t = 8.47842766036889956997e-32;
  const double a = ax <= kTrigMax ? ax : 0.0;  // NaN: 0
  const double kn = a * kInvPio2 + kRound;
  const double n = kn - kRound;
  const double r1 = a - n * kPio2_1;  // exact (Sterbenz)
  double r2, e2, r3, e3;
  two_diff(r1, n * kPio2_2, r2, e2);
  two_diff(r2, n * kPio2_3, r3, e3);
  const double tail = (e2 + e3) - n * kPio2_3t;
  const double y0 = r3 + tail;
  const double y1 = (r3 - y0) + tail;
  // fdlibm's __kernel_sin and __kernel_cos (FreeBSD's k_sin.c, k_cos.c) for |y| <= pi/4.
  const double z = y0 * y0, w = z * z, v = z * y0;
  const double rs = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 + z * 2.75573137070700676789e-06) +
                    z * w * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10);
  const double s = y0 - ((z * (0.5 * y1 - v * rs) - y1) - v * -1.66666666666666324348e-01);
  const double rc =
      z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * 2.48015872894767294178e-05)) +
      w * w * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11));
  const double hz = 0.5 * z;
  const double one_hz = 1.0 - hz;
  const double c = one_hz + (((1.0 - one_hz) - hz) + (z * rc - y0 * y1));
  return {s, c, rounded_int(kn) & 3};
}

ANATOMY_VEC64_INLINE double sin(double x) {
  const double ax = from_bits(bits(x) & 0x7fffffffffffffffull);
  const Reduced r = trig_reduce(ax);
  const double v = blend((r.n & 1) != 0, r.cos, r.sin);
  // Negative in quadrants 2 and 3, and for negative x (sin is odd): one sign bit from both.
  const uint64_t flip = (static_cast<uint64_t>(r.n & 2) << 62) ^ (bits(x) & 0x8000000000000000ull);
  return from_bits(bits(v) ^ flip);
}

ANATOMY_VEC64_INLINE double cos(double x) {
  const double ax = from_bits(bits(x) & 0x7fffffffffffffffull);
  const Reduced r = trig_reduce(ax);
  const double v = blend((r.n & 1) != 0, r.sin, r.cos);
  // Negative in quadrants 1 and 2.
  const uint64_t flip = static_cast<uint64_t>((r.n ^ (r.n >> 1)) & 1) << 63;
  return from_bits(bits(v) ^ flip);
}

// tan = sin / cos of y in even quadrants, -cos / sin in odd ones, with x's sign.
ANATOMY_VEC64_INLINE double tan(double x) {
  const double ax = from_bits(bits(x) & 0x7fffffffffffffffull);
  const Reduced r = trig_reduce(ax);
  const bool odd = (r.n & 1) != 0;
  const double q = blend(odd, r.cos, r.sin) / blend(odd, r.sin, r.cos);
  const uint64_t flip = (static_cast<uint64_t>(odd) << 63) ^ (bits(x) & 0x8000000000000000ull);
  return from_bits(bits(q) ^ flip);
}

#undef ANATOMY_VEC64_INLINE

}  // namespace anatomy::cpu::vec64
