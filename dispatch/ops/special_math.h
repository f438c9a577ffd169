// The special functions the C++ library lacks (digamma, polygamma, erfinv), written once as
// host-device code for the unary functors (dispatch/ops/unary_functors.h), so the CPU loop and
// the CUDA kernels compute the same values. They follow the algorithms PyTorch takes from Cephes,
// and its special values: digamma(+-0) is -+inf, digamma at a negative integer is NaN,
// erfinv(+-1) is +-inf and erfinv outside [-1, 1] is NaN.
#pragma once

#include "anatomy/dispatch/ops/elementwise_scalar.h"

namespace anatomy::elementwise {

inline constexpr double kPi = 3.14159265358979323846;

// digamma (psi), the derivative of lgamma: the reflection psi(x) = psi(1 - x) - pi / tan(pi x)
// for negative x, the recurrence psi(x) = psi(x + 1) - 1 / x up to x >= 10, then the asymptotic
// series log x - 1 / (2x) - sum B_2k / (2k x^2k) (Cephes' psi; PyTorch's calc_digamma).
template <typename M>
ANATOMY_HOST_DEVICE inline M digamma(M x) {
  if (x == M(0)) return math::copysign(infinity<M>(), -x);
  M result = 0;
  if (x < M(0)) {
    if (x == math::trunc(x)) return quiet_nan<M>();  // a pole (and -inf)
    // The fractional part keeps tan's argument small, so pi * r loses nothing.
    const M r = x - math::trunc(x);
    result = -M(kPi) / math::tan(M(kPi) * r);
    x = M(1) - x;
  }
  while (x < M(10)) {
    result -= M(1) / x;
    x += M(1);
  }
  if (x == M(10)) return result + M(2.25175258906672110764);  // psi(10), exactly
  M y = 0;
  // Beyond 1e17 the series' terms are below a double's precision of log x.
  if (x < M(1.0e17)) {
    const M z = M(1) / (x * x);
    // 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12, as a polynomial in z (Horner).
    M p = M(8.33333333333333333333E-2);
    p = p * z + M(-2.10927960927960927961E-2);
    p = p * z + M(7.57575757575757575758E-3);
    p = p * z + M(-4.16666666666666666667E-3);
    p = p * z + M(3.96825396825396825397E-3);
    p = p * z + M(-8.33333333333333333333E-3);
    p = p * z + M(8.33333333333333333333E-2);
    y = z * p;
  }
  return result + math::log(x) - M(0.5) / x - y;
}

// The Hurwitz zeta function zeta(s, q) = sum over k >= 0 of (k + q)^-s, for s > 1: the sum's
// first terms, then the Euler-Maclaurin tail (Cephes' zeta, which PyTorch's polygamma uses).
template <typename M>
ANATOMY_HOST_DEVICE inline M hurwitz_zeta(M s, M q) {
  // The Euler-Maclaurin coefficients (2k)! / B_2k.
  constexpr double kA[] = {12.0,
                           -720.0,
                           30240.0,
                           -1209600.0,
                           47900160.0,
                           -1.8924375803183791606e9,
                           7.47242496e10,
                           -2.950130727918164224e12,
                           1.1646782814350067249e14,
                           -4.5979787224074726105e15,
                           1.8152105401943546773e17,
                           -7.1661652561756670113e18};
  const M machep = M(1.11022302462515654042E-16);
  if (s == M(1)) return infinity<M>();
  if (s < M(1)) return quiet_nan<M>();
  if (q == infinity<M>()) return 0;  // every term is 0 (the tail below would be 0 * inf)
  if (q <= M(0)) {
    if (q == math::floor(q)) return infinity<M>();
    if (s != math::floor(s)) return quiet_nan<M>();
  }
  M sum = math::pow(q, -s);
  M a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= M(9)) {
    ++i;
    a += M(1);
    b = math::pow(a, -s);
    sum += b;
    if (-machep * sum < b && b < machep * sum) return sum;
  }
  const M w = a;
  sum += b * w / (s - M(1));
  sum -= M(0.5) * b;
  M fact = 1, k = 0;
  for (int j = 0; j < 12; ++j) {
    fact *= s + k;
    b /= w;
    M t = fact * b / M(kA[j]);
    sum += t;
    if (math::fabs(t / sum) < machep) return sum;
    k += M(1);
    fact *= s + k;
    b /= w;
    k += M(1);
  }
  return sum;
}

// polygamma(n, x), the n-th derivative of digamma: digamma itself for n = 0, else
// (-1)^(n+1) n! zeta(n + 1, x). n is a whole number >= 0 (checked by the operator).
template <typename M>
ANATOMY_HOST_DEVICE inline M polygamma(M n, M x) {
  if (n == M(0)) return digamma(x);
  const M sign = math::fmod(n, M(2)) == M(1) ? M(1) : M(-1);
  return sign * math::exp(math::lgamma(n + M(1))) * hurwitz_zeta(n + M(1), x);
}

// erfinv, the inverse of erf on [-1, 1]. On the device CUDA's erfinv; on the host Giles'
// single-precision approximation ("Approximating the erfinv function", GPU Computing Gems, 2011)
// refined by two Newton steps on erf, which the C++ library has (and erfinv it has not); the
// refinement runs in double, so fp32 and fp64 both end within a few ulp.
template <typename M>
ANATOMY_HOST_DEVICE inline M erfinv(M y) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<M, float>) return ::erfinvf(y);
  else return ::erfinv(y);
#else
  const double v = static_cast<double>(y);
  if (math::isnan(v) || v < -1.0 || v > 1.0) return quiet_nan<M>();
  if (v == 1.0 || v == -1.0) return static_cast<M>(math::copysign(infinity<double>(), v));
  if (v == 0.0) return y;  // keeps -0
  // erfinv is odd: solved for a = |v|.
  const double a = math::fabs(v);
  double w = -math::log((1.0 - a) * (1.0 + a));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = math::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * a;
  // Newton on erf(x) - a, erf's slope being 2 / sqrt(pi) exp(-x^2). Above 0.5 the residual is
  // (1 - a) - erfc(x), exact where erf(x) - a would cancel (1 - a is exact there).
  for (int i = 0; i < 2; ++i) {
    const double r = a <= 0.5 ? math::erf(x) - a : (1.0 - a) - math::erfc(x);
    x -= r / (1.12837916709551257390 * math::exp(-x * x));
  }
  return static_cast<M>(math::copysign(x, v));
#endif
}

}  // namespace anatomy::elementwise
