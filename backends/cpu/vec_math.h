// fp32 transcendental functions written so a loop over them vectorizes: no branches (every case
// is computed and the right one selected, which GCC turns into masks and blends), no calls, no
// table lookups, and the exponent handled with integer operations on the bits. A plain libm
// call per element (std::exp, std::tanh) keeps the loop scalar: 8.8 GiB/s for exp at 16M fp32
// against ~200 GiB/s for add on the same machine.
//
// Accuracy: a few ulp of the fp64 value over the whole fp32 range, denormal results included
// (tests/core/test_vec_math.cpp sweeps each function and docs/perf.md lists the measured bounds).
// Special values follow the C library's: exp(-inf) = 0, exp(+inf) = inf, log(0) = -inf, log of
// a negative number is NaN, NaN in gives NaN out, overflow gives inf and underflow 0.
//
// Only IEEE add, sub, mul, div, conversions and bit operations are written; vec_loops.cpp is
// compiled with -ffp-contract=fast, so in its AVX2 + FMA and AVX-512 copies each a * b + c is one
// FMA (rounded once). Nothing here depends on a product being rounded before the add: the
// Cody-Waite products n * ln2_hi are exact either way, and the split squares are formed without
// an add. Each copy is held to the same ulp bounds (tests/core/test_vec_math.cpp).
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace anatomy::cpu::vec {

#define ANATOMY_VEC_INLINE [[gnu::always_inline]] inline

ANATOMY_VEC_INLINE uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }
ANATOMY_VEC_INLINE float from_bits(uint32_t u) { return std::bit_cast<float>(u); }
ANATOMY_VEC_INLINE float abs(float x) { return from_bits(bits(x) & 0x7fffffffu); }
// |magnitude| with the sign of `sign`.
ANATOMY_VEC_INLINE float with_sign_of(float magnitude, float sign) {
  return from_bits((bits(magnitude) & 0x7fffffffu) | (bits(sign) & 0x80000000u));
}
ANATOMY_VEC_INLINE bool is_nan(float x) { return x != x; }
// c ? a : b by masks on the bits, for the chains of special cases: written as `?:`, GCC merges a
// chain into one join of five or more values, which GCC 13's if-conversion refuses ("complicated
// PHI"), leaving the whole loop scalar; a blend is no control flow at all.
ANATOMY_VEC_INLINE float blend(bool c, float a, float b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return from_bits((bits(a) & mask) | (bits(b) & ~mask));
}

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// exp's constants, shared with the AVX-512 gelu's tail (gelu_pieces.h): log2(e); ln 2 in two
// parts (Cody-Waite, the first with few enough bits that n * kLn2Hi is exact); 1.5 * 2^23, whose
// addition rounds to an integer held in the low mantissa bits.
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
inline constexpr float kRound = 12582912.0f;
// P of expm1_reduced, highest power first.
inline constexpr float kExpm1Reduced[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                          4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

// e^r - 1 = r + r^2 P(r) for r in [-ln2/2, ln2/2] (Cephes expf's minimax polynomial).
ANATOMY_VEC_INLINE float expm1_reduced(float r) {
  float poly = kExpm1Reduced[0];
  for (int j = 1; j < 6; ++j) poly = poly * r + kExpm1Reduced[j];
  return poly * (r * r) + r;
}

// exp(x) = p * s1 * s2 for any float x: p = e^r, with r = x - n ln2 in [-ln2/2, ln2/2]
// (Cody-Waite: n ln2 in two parts, the first with few enough bits that n * kLn2Hi is exact), and
// 2^n as two powers of two that are each normal, so the product rounds once even where the
// result is subnormal, and overflows to inf on its own. q = e^r - 1 is kept for expm1, which must
// not compute 1 + q first.
struct ExpParts {
  float p, q, s1, s2;
  int32_t n;
  ANATOMY_VEC_INLINE float value() const { return (p * s1) * s2; }
};

ANATOMY_VEC_INLINE ExpParts exp_parts(float hi) {
  // Adding kRound rounds to an integer held in the low mantissa bits: n without a float-to-int
  // conversion (which NaN would make undefined).
  // e^89 overflows and e^-120 is below the smallest subnormal, so clamping there changes no
  // result and keeps n in [-174, 129]. NaN passes both tests
  // unchanged and propagates through r.
  float x = hi > 89.0f ? 89.0f : hi;
  x = x < -120.0f ? -120.0f : x;
  const float kn = x * kLog2e + kRound;
  const float n = kn - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  const float q = expm1_reduced(r);
  const int32_t ni = static_cast<int32_t>(bits(kn) - bits(kRound));
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  ExpParts parts;
  // Below the clamp the result is exactly 0 (so -inf * ... gives NaN as 0 * inf does).
  const float p = q + 1.0f;
  parts.p = hi < -120.0f ? 0.0f : p;
  parts.q = q;
  parts.s1 = from_bits(static_cast<uint32_t>(n1 + 127) << 23);
  parts.s2 = from_bits(static_cast<uint32_t>(n2 + 127) << 23);
  parts.n = ni;
  return parts;
}

ANATOMY_VEC_INLINE float exp(float x) { return exp_parts(x).value(); }

// e^(hi + lo) for hi in [-87, 88] (NaN passes; lo as exp_parts takes it): e^hi is then a normal
// number or overflows, so one power of two scales it, with no clamp and no special case. Callers
// that know their range (tanh's 2|x|, erf's -t^2) save a third or more of exp's operations.
ANATOMY_VEC_INLINE float exp_normal(float hi, float lo = 0.0f) {
  const float kn = hi * kLog2e + kRound;
  const float n = kn - kRound;
  const float r = ((hi - n * kLn2Hi) - n * kLn2Lo) + lo;
  const int32_t ni = static_cast<int32_t>(bits(kn) - bits(kRound));
  // A product, not an add to the exponent bits: for NaN, ni is meaningless and NaN * s is NaN.
  const float scale = from_bits(static_cast<uint32_t>(ni + 127) << 23);
  return (expm1_reduced(r) + 1.0f) * scale;
}

// e^(hi + lo) for hi <= 0 where the result itself matters down to the subnormals (a tail, not
// a term beside 1), as e * factor: in the normal range (hi >= -87) e is exp_normal's value and
// the factor 1; deeper, e = e^(hi + 32 + lo) (hi + 32 is exact there) and the factor e^-32, so
// that times(m) rounds once into the subnormal range; below -119 the factor is 0 (the result is
// below half the smallest subnormal; an infinite m gives NaN, as m * 0 does).
struct TailExp {
  float e, factor;
  float beside_one;  // e^(hi + lo) as a term beside 1: 0 when deep (1 + e^hi is 1 there)
  ANATOMY_VEC_INLINE float times(float m) const { return (m * e) * factor; }
};

// Normal = true: the caller knows hi >= -87 (a block of arguments checked by the loop,
// vec_loops.cpp's fast forms), so the deep case is left out; the values are the same.
template <bool Normal = false>
ANATOMY_VEC_INLINE TailExp tail_exp(float hi, float lo) {
  if constexpr (Normal) {
    const float e = exp_normal(hi, lo);
    return {e, 1.0f, e};
  }
  constexpr float kExpMinus32 = 1.26641655e-14f;  // e^-32
  const bool deep = hi < -87.0f, beyond = hi < -119.0f;
  const float clamped = beyond ? -119.0f : hi;
  const float e = exp_normal(deep ? clamped + 32.0f : clamped, lo);
  const float scale = deep ? kExpMinus32 : 1.0f;
  return {e, blend(beyond, 0.0f, scale), deep ? 0.0f : e};
}

// e^x - 1 = 2^n (q + 1 - 2^-n): exact q where n = 0 (small x), no cancellation elsewhere.
ANATOMY_VEC_INLINE float expm1(float x) {
  // Below -20 the result rounds to -1; clamping keeps 2^-n a normal number.
  const float xc = x < -20.0f ? -20.0f : x;
  const ExpParts e = exp_parts(xc);
  // 2^-n for n <= 100; beyond, 1 - 2^-n rounds to 1 anyway.
  const int32_t nt = e.n > 100 ? 100 : e.n;
  const float t = 1.0f - from_bits(static_cast<uint32_t>(127 - nt) << 23);
  const float r = ((e.q + t) * e.s1) * e.s2;
  return x == 0.0f ? x : r;  // keeps -0
}

// 2^x = 2^n 2^r with n = x rounded and r = x - n exact in [-1/2, 1/2]: 2^r = e^(r ln2), whose
// argument lies in [-ln2/2, ln2/2] (expm1_reduced's range) and carries r ln2's rounding only
// (0.35 ulp). 2^n as two powers of two, as exp_parts does, so subnormal results round once;
// integers give 2^n exactly.
ANATOMY_VEC_INLINE float exp2(float x) {
  constexpr float kLn2 = 0.693147180559945309f;
  float xc = x > 129.0f ? 129.0f : x;  // 2^129 overflows; NaN passes
  xc = xc < -152.0f ? -152.0f : xc;    // below 2^-150 the result is 0 (times p < 1.5)
  const float kn = xc + kRound;
  const float n = kn - kRound;
  const float r = xc - n;
  const float p = expm1_reduced(r * kLn2) + 1.0f;
  const int32_t ni = static_cast<int32_t>(bits(kn) - bits(kRound));
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  const float s1 = from_bits(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = from_bits(static_cast<uint32_t>(n2 + 127) << 23);
  const float v = (p * s1) * s2;
  return x < -152.0f ? 0.0f * p : v;  // -inf: 0
}

// log(x) = e ln2 + log(m), with x = m 2^e, m in [sqrt(1/2), sqrt(2)); log(1 + f) by Cephes
// logf's polynomial. The exponent comes from the bits; subnormal x is scaled by 2^23 first.
// x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)): e, f, z = f^2 and p, with
// log(1 + f) = f + (p - z / 2) (Cephes logf's polynomial). Subnormal x is scaled by 2^23 first; zero,
// negative, infinite and NaN x give meaningless parts (the callers replace those results).
struct LogParts {
  float e, f, z, p;
};

ANATOMY_VEC_INLINE LogParts log_parts(float x) {
  const bool subnormal = x < 0x1p-126f;  // also 0 and negatives, replaced at the end
  const float scaled = x * 0x1p23f;
  const float xs = subnormal ? scaled : x;
  const uint32_t u = bits(xs);
  // The exponent is a float from here on (small integers, exact): the selects below then choose
  // between floats on float conditions, which every GCC if-converts; an integer chosen on a
  // float comparison kept GCC 13's loops scalar ("control flow in loop"). m below is in [0.5, 1).
  float fe = static_cast<float>(static_cast<int32_t>((u >> 23) & 0xffu) - 126);
  fe = subnormal ? fe - 23.0f : fe;
  const float m = from_bits((u & 0x007fffffu) | 0x3f000000u);
  const bool low = m < 0.707106781186547524f;
  fe = low ? fe - 1.0f : fe;
  const float m2 = m + m;
  const float f = (low ? m2 : m) - 1.0f;  // exact
  const float z = f * f;
  float poly = 7.0376836292e-2f;
  poly = poly * f - 1.1514610310e-1f;
  poly = poly * f + 1.1676998740e-1f;
  poly = poly * f - 1.2420140846e-1f;
  poly = poly * f + 1.4249322787e-1f;
  poly = poly * f - 1.6668057665e-1f;
  poly = poly * f + 2.0000714765e-1f;
  poly = poly * f - 2.4999993993e-1f;
  poly = poly * f + 3.3333331174e-1f;
  return {fe, f, z, poly * f * z};
}

// The C library's special values of log and log2.
ANATOMY_VEC_INLINE float log_specials(float x, float r) {
  r = blend(x == 0.0f, -kInf, r);
  r = blend(x < 0.0f, kNaN, r);
  r = blend(x == kInf, kInf, r);
  return blend(is_nan(x), x, r);
}

// log(x) = e ln2 + log(1 + f), ln2 in two parts so e ln2_hi is exact.
ANATOMY_VEC_INLINE float log(float x) {
  const LogParts l = log_parts(x);
  const float y = (l.p + l.e * kLn2Lo) - 0.5f * l.z;
  return log_specials(x, (l.f + y) + l.e * kLn2Hi);
}

// log2(x) = e + log(1 + f) / ln2: e exact, so a power of two gives its exponent exactly.
ANATOMY_VEC_INLINE float log2(float x) {
  const LogParts l = log_parts(x);
  return log_specials(x, (l.f + (l.p - 0.5f * l.z)) * kLog2e + l.e);
}

// log(1 + x) = log(u) - ((u - 1) - x) / u with u = 1 + x rounded: the second term puts back
// what the rounding of u lost (exact where u = 1, giving x).
ANATOMY_VEC_INLINE float log1p(float x) {
  const float u = 1.0f + x;
  float r = log(u) - ((u - 1.0f) - x) / u;
  r = blend(x == -1.0f, -kInf, r);
  r = blend(x == kInf, kInf, r);
  return blend(x == 0.0f, x, r);  // keeps -0
}

// m * sigmoid(z) = m / (1 + e^-z) for z >= 0, m e^z / (1 + e^z) below: e^-|z| <= 1 never
// overflows, and the tail m e^z / (1 + e^z) is tail_exp's, right down to the subnormals. z = zh +
// zl (zl: a low part, or 0). -inf gives m * 0, +inf gives m.
// Normal = true for |z| <= 87 only (tail_exp's).
template <bool Normal = false>
ANATOMY_VEC_INLINE float mul_sigmoid(float m, float zh, float zl = 0.0f) {
  const bool negative = zh < 0.0f;
  const TailExp e = tail_exp<Normal>(negative ? zh : -zh, negative ? zl : -zl);  // e^-|z|
  const float ratio = m / (1.0f + e.beside_one);
  return negative ? e.times(ratio) : ratio;
}

template <bool Normal = false>
ANATOMY_VEC_INLINE float sigmoid(float x) {
  return mul_sigmoid<Normal>(1.0f, x);
}

// x * sigmoid(x); -inf gives NaN (-inf * 0), as x / (1 + e^-x) does.
template <bool Normal = false>
ANATOMY_VEC_INLINE float silu(float x) {
  return mul_sigmoid<Normal>(x, x);
}

// Cephes tanhf's odd polynomial for |x| < 0.625: tanh(x) = x + x z p(z), z = x^2, p's
// coefficients from z^4 down to z^0.
inline constexpr float kTanhSmall[5] = {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f, 1.33314422036e-1f,
                                        -3.33332819422e-1f};

// tanh: for |x| < 0.625 Cephes tanhf's odd polynomial; above, 1 - 2 / (e^2|x| + 1), which
// cancels no more than one bit there and reaches 1 where e^2|x| overflows. The sign is x's
// (the polynomial's x + x z p alone turns -0 into +0).
ANATOMY_VEC_INLINE float tanh(float x) {
  const float ax = abs(x);
  const float z = x * x;
  float poly = kTanhSmall[0];
  for (int j = 1; j < 5; ++j) poly = poly * z + kTanhSmall[j];
  const float small = poly * z * x + x;
  // Past 2|x| = 20 the result is 1 to fp32 precision (2 / (e^20 + 1) < 2^-27).
  const float a2 = ax + ax;
  const float large = 1.0f - 2.0f / (exp_normal(a2 > 20.0f ? 20.0f : a2) + 1.0f);
  return with_sign_of(ax < 0.625f ? small : large, x);
}

// gelu's tanh form: 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
// sigmoid's tail is e^2u, whose relative error is |2u| times u's: 2u is formed in fp64 and
// passed as a float pair, so the result stays within a few ulp where it is tiny.
// Normal = true for |x| <= 9 only (|2u| <= 66: no clamp, sigmoid's normal form).
template <bool Normal = false>
ANATOMY_VEC_INLINE float gelu_tanh(float x) {
  constexpr double kTwoSqrt2OverPi = 2 * 0.79788456080286535588, kCoeff = 0.044715;
  const double xd = x;
  double z = kTwoSqrt2OverPi * xd * (1.0 + kCoeff * xd * xd);
  if constexpr (!Normal) {
    // sigmoid is 0 or 1 beyond +-1e4; the clamp keeps the conversion to float in range and the
    // low part finite (inf - inf is NaN). NaN passes through.
    z = z > 1e4 ? 1e4 : z;
    z = z < -1e4 ? -1e4 : z;
  }
  const float zh = static_cast<float>(z);
  const float zl = static_cast<float>(z - static_cast<double>(zh));
  return mul_sigmoid<Normal>(x, zh, zl);
}

// erf(t) / t on [0, 0.84] as a polynomial in t^2 (least-squares fit of relative error).
ANATOMY_VEC_INLINE float erf_small_over_t(float t2) {
  float poly = 8.936991799e-05f;
  poly = poly * t2 - 8.265195647e-04f;
  poly = poly * t2 + 5.210937001e-03f;
  poly = poly * t2 - 2.686308138e-02f;
  poly = poly * t2 + 1.128375754e-01f;
  poly = poly * t2 - 3.761263788e-01f;
  return poly * t2 + 1.128379226e+00f;
}

// x^2 = hi + lo exactly enough for e^-x^2: x's top 12 significant bits square exactly, and the
// rest is (x - xh)(x + xh). Finite x below 2^60 only (callers clamp).
struct Square {
  float hi, lo;
};
ANATOMY_VEC_INLINE Square split_square(float x) {
  const float xh = from_bits(bits(x) & 0xfffff000u);
  return {xh * xh, (x - xh) * (x + xh)};
}

// m erfc(t) for t >= 0.84, with t^2 given as a split square: m e^-t^2 f(t), where
// f(t) = erfc(t) e^t^2 is a polynomial in w = 1 / (1 + t/2) fitted on [0.84, 10.6]. The exact
// square matters: e^-t^2 would otherwise take t^2's rounding error times t^2 (100 ulp at t = 9).
// Tail = false: only erfc's size against 1 matters (erf = 1 - erfc), so t^2 is clamped at 87 and
// e^-t^2 taken in the normal range (exp_normal); true: the tail itself, down to subnormals (gelu).
template <bool Tail, bool Normal = false>
ANATOMY_VEC_INLINE float mul_erfc_large(float m, float t, Square t2) {
  const float w = 1.0f / (1.0f + 0.5f * t);
  float f = 7.630249113e-02f;
  f = f * w - 1.719827056e-01f;
  f = f * w + 9.571654722e-03f;
  f = f * w + 1.152662039e-01f;
  f = f * w + 1.543262899e-01f;
  f = f * w + 2.537852824e-01f;
  f = f * w + 2.808906436e-01f;
  f = f * w + 2.822051644e-01f;
  f = f * w - 4.190786512e-06f;
  if constexpr (Tail) {
    return tail_exp<Normal>(-t2.hi, -t2.lo).times(m * f);
  } else {
    const bool far = t2.hi > 87.0f;  // erfc < 2^-127 there: 1 - erfc is 1
    return (m * f) * exp_normal(far ? -87.0f : -t2.hi, far ? 0.0f : -t2.lo);
  }
}

ANATOMY_VEC_INLINE float erf(float x) {
  // Past 10, erfc is 0 in fp32 (and the clamp keeps the square finite for infinities).
  const float ax = abs(x) > 10.0f ? 10.0f : abs(x);
  const float small = x * erf_small_over_t(x * x);
  const float large = with_sign_of(1.0f - mul_erfc_large<false>(1.0f, ax, split_square(ax)), x);
  return ax < 0.84f ? small : large;  // NaN: large, NaN through exp_parts
}

// gelu(x) = x Phi(x) = x erfc(-x / sqrt 2) / 2: through erfc where |x| > 0.84 sqrt 2, so the
// negative tail is not 1 + erf cancelling to nothing, and through erf near 0. The tail's square
// t^2 = x^2 / 2 is x's split square halved (exact), not the square of the rounded x / sqrt 2.
// Normal = true for |x| <= 13 only (t^2 <= 84.5: the tail's exponential is normal, no clamp).
template <bool Normal = false>
ANATOMY_VEC_INLINE float gelu(float x) {
  constexpr float kRsqrt2 = 0.70710678118654752440f;
  // Beyond +-20, Phi is 0 or 1.
  const float xc = Normal ? x : (x < -20.0f ? -20.0f : (x > 20.0f ? 20.0f : x));
  const float t = xc * kRsqrt2;
  const float at = abs(t);
  const float near = 0.5f * x + (0.5f * x) * (t * erf_small_over_t(t * t));
  const Square x2 = split_square(xc);
  const float tail = mul_erfc_large<true, Normal>(0.5f * x, at, {0.5f * x2.hi, 0.5f * x2.lo});
  // -inf: -inf * 0 = NaN, as x * Phi(x) gives.
  const float head = x - tail;
  const float far = x < 0.0f ? tail : head;
  const float r = at < 0.84f ? near : far;
  return Normal || x != kInf ? r : x;
}

// log(1 + e^x): x + log1p(e^-x) above 0 so e^x cannot overflow; log1p keeps the tail e^x exact.
ANATOMY_VEC_INLINE float log1p_exp(float x) {
  const float ax = abs(x);
  const float tail = log1p(exp(-ax));
  const float sum = x + tail;
  return x > 0.0f ? sum : tail;
}

// sin and cos for |x| <= kTrigMax: the octant j of |x| (|x| 4/pi truncated, made even), the
// reduced argument z = |x| - j pi/4 in double with pi/4 in two parts (the first with 32 bits, so
// its product with j is exact), then Cephes sinf's or cosf's polynomial of z by the octant, and
// the sign. The double reduction matters near the zeros: |x| within 1e-9 of a multiple of pi/2
// gives a result of that size, which a float reduction (Cephes's three float parts) misses by
// hundreds of ulp (an exhaustive check of [2^-12, 8192] measured 620). Defined for |x| <=
// kTrigMax only: the loops (vec_loops.cpp) call the C library beyond it and for inf and NaN (the
// reduction still clamps, so that no float-to-int conversion is ever out of range).
inline constexpr float kTrigMax = 8192.0f;

struct Octant {
  float s, c;  // sin and cos of the reduced argument
  int32_t j;   // the octant, 0, 2, 4 or 6
};

ANATOMY_VEC_INLINE Octant trig_reduce(float ax) {
  constexpr float kFourOverPi = 1.27323954473516f;
  constexpr double kPiOver4Hi = 0.7853981633670628, kPiOver4Lo = 3.038550253253096e-11;
  const float a = ax <= kTrigMax ? ax : 0.0f;  // keeps the conversion in range (NaN: 0)
  int32_t j = static_cast<int32_t>(a * kFourOverPi);
  j += j & 1;
  const double y = static_cast<double>(j);
  const float z = static_cast<float>((static_cast<double>(a) - y * kPiOver4Hi) - y * kPiOver4Lo);
  const float zz = z * z;
  const float c =
      ((2.443315711809948e-5f * zz - 1.388731625493765e-3f) * zz + 4.166664568298827e-2f) * zz * zz - 0.5f * zz + 1.0f;
  const float s = ((-1.9515295891e-4f * zz + 8.3321608736e-3f) * zz - 1.6666654611e-1f) * zz * z + z;
  return {s, c, j & 7};
}

ANATOMY_VEC_INLINE float sin(float x) {
  const float ax = abs(x);
  const Octant o = trig_reduce(ax);
  const float v = blend((o.j & 2) != 0, o.c, o.s);
  // Negative for octants 4 and 6, and for negative x (sin is odd): one sign bit from both.
  const uint32_t flip = (static_cast<uint32_t>(o.j & 4) << 29) ^ (bits(x) & 0x80000000u);
  return from_bits(bits(v) ^ flip);
}

ANATOMY_VEC_INLINE float cos(float x) {
  const float ax = abs(x);
  const Octant o = trig_reduce(ax);
  const float v = blend((o.j & 2) != 0, o.s, o.c);
  // Negative for octants 2 and 4.
  const uint32_t flip = static_cast<uint32_t>(((o.j >> 1) ^ (o.j >> 2)) & 1) << 31;
  return from_bits(bits(v) ^ flip);
}

// tan = sin / cos of the reduced argument, with the octant's sign and swap (-cos / sin in
// octants 2 and 6); for |x| <= kTrigMax, as sin and cos.
ANATOMY_VEC_INLINE float tan(float x) {
  const float ax = abs(x);
  const Octant o = trig_reduce(ax);
  const bool swap = (o.j & 2) != 0;
  const float q = blend(swap, o.c, o.s) / blend(swap, o.s, o.c);
  const uint32_t flip = (static_cast<uint32_t>(swap) << 31) ^ (bits(x) & 0x80000000u);
  return from_bits(bits(q) ^ flip);
}

#undef ANATOMY_VEC_INLINE

}  // namespace anatomy::cpu::vec
