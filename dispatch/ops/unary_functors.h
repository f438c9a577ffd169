// The scalar rules of the element-wise unary operators, written once for every backend: each
// functor of the rows (dispatch/ops/unary_rows.h) is host-device code, instantiated by the CPU
// loop (backends/cpu/unary_cpu.cpp) and by the CUDA kernels
// (backends/cuda/elementwise/unary_*.cu), so both backends compute the same values. fp16 and bf16
// compute in float (opmath_t) and round once. NaN propagates through every function, relu and
// sign included (sign(NaN) is NaN, as in NumPy; PyTorch's gives 0); integer negation wraps.
//
// A functor is `template <typename T> struct XFn : UnaryFn<T> { R operator()(T x) const; }` for
// the dtypes of its row's kind (unary_takes_v), R being T or, for the predicates, bool. `a`, `b`
// and `c` (from UnaryFn) are the op's non-tensor arguments (UnaryScalars) in the type it computes
// in; the other ops ignore them.
#pragma once

#include "anatomy/dispatch/ops/elementwise_scalar.h"
#include "anatomy/dispatch/ops/special_math.h"

namespace anatomy::elementwise {

template <typename T>
struct UnaryFn {
  opmath_t<T> a, b, c;
};

// ---- the ops that keep the dtype (integers included) ----

// Unsigned and INT_MIN negation wrap, as in PyTorch.
template <typename T>
struct NegFn : UnaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_int_v<T>) return wrapping_neg(x);
    else return static_cast<T>(-opmath_t<T>(x));
  }
};
template <typename T>
struct AbsFn : UnaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) return x;
    else if constexpr (is_int_v<T>) return x < 0 ? wrapping_neg(x) : x;
    else return static_cast<T>(math::fabs(opmath_t<T>(x)));
  }
};
// bool keeps its value; NaN stays NaN.
template <typename T>
struct SignFn : UnaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T x) const {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, bool>) return x;
    else if constexpr (std::is_unsigned_v<T>) return static_cast<T>(x != 0);
    else if constexpr (is_int_v<T>) return static_cast<T>((T(0) < x) - (x < T(0)));
    else {
      const M v = M(x);
      return static_cast<T>(math::isnan(v) ? v : M((M(0) < v) - (v < M(0))));
    }
  }
};
// x < 0 is false for NaN, so NaN propagates (PyTorch's clamp_min does too).
template <typename T>
struct ReluFn : UnaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) return x;
    else return static_cast<T>(opmath_t<T>(x) < opmath_t<T>(0) ? opmath_t<T>(0) : opmath_t<T>(x));
  }
};

// x * x, wrapping for integers (PyTorch's square is pow(x, 2), which wraps the same way).
template <typename T>
struct SquareFn : UnaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_int_v<T>) return static_cast<T>(static_cast<wrap_t<T>>(x) * static_cast<wrap_t<T>>(x));
    else return static_cast<T>(opmath_t<T>(x) * opmath_t<T>(x));
  }
};
// a = min_val, b = max_val (in T for integers). min(max(x, a), b), as clamp's, so that min_val
// above max_val gives max_val everywhere (PyTorch's hardtanh is clamp). NaN passes through.
template <typename T>
struct HardtanhFn : UnaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T v) const {
    const opmath_t<T> x = opmath_t<T>(v);
    const opmath_t<T> m = x < this->a ? this->a : x;
    return static_cast<T>(m > this->b ? this->b : m);
  }
};

// The rounding ops and nan_to_num leave integers and bool as they are.
#define ANATOMY_ROUNDING_FN(Name, expr)           \
  template <typename T>                           \
  struct Name : UnaryFn<T> {                      \
    ANATOMY_HOST_DEVICE T operator()(T v) const { \
      if constexpr (!is_floating_v<T>) return v;  \
      else {                                      \
        const opmath_t<T> x = opmath_t<T>(v);     \
        return static_cast<T>(expr);              \
      }                                           \
    }                                             \
  };
ANATOMY_ROUNDING_FN(FloorFn, math::floor(x))
ANATOMY_ROUNDING_FN(CeilFn, math::ceil(x))
ANATOMY_ROUNDING_FN(RoundFn, math::nearbyint(x))  // half to even (the default rounding mode)
ANATOMY_ROUNDING_FN(TruncFn, math::trunc(x))
// a, b, c: the replacements of NaN, +inf and -inf.
ANATOMY_ROUNDING_FN(NanToNumFn, math::isnan(x) ? this->a : math::isinf(x) ? (x > 0 ? this->b : this->c) : x)
#undef ANATOMY_ROUNDING_FN

template <typename T>
struct BitwiseNotFn : UnaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return !x;
    else return static_cast<T>(~x);
  }
};

// ---- floating functions (the plan gives them floating dtypes only) ----

#define ANATOMY_FLOAT_UNARY_FN(Name, expr)        \
  template <typename T>                           \
  struct Name : UnaryFn<T> {                      \
    ANATOMY_HOST_DEVICE T operator()(T v) const { \
      using M = opmath_t<T>;                      \
      const M x = M(v);                           \
      return static_cast<T>(expr);                \
    }                                             \
  };
ANATOMY_FLOAT_UNARY_FN(ExpFn, math::exp(x))
ANATOMY_FLOAT_UNARY_FN(Exp2Fn, math::exp2(x))
ANATOMY_FLOAT_UNARY_FN(Expm1Fn, math::expm1(x))
ANATOMY_FLOAT_UNARY_FN(LogFn, math::log(x))
ANATOMY_FLOAT_UNARY_FN(Log1pFn, math::log1p(x))
ANATOMY_FLOAT_UNARY_FN(Log2Fn, math::log2(x))
ANATOMY_FLOAT_UNARY_FN(SqrtFn, math::sqrt(x))
ANATOMY_FLOAT_UNARY_FN(RsqrtFn, M(1) / math::sqrt(x))
ANATOMY_FLOAT_UNARY_FN(ReciprocalFn, M(1) / x)
ANATOMY_FLOAT_UNARY_FN(SinFn, math::sin(x))
ANATOMY_FLOAT_UNARY_FN(CosFn, math::cos(x))
ANATOMY_FLOAT_UNARY_FN(TanFn, math::tan(x))
ANATOMY_FLOAT_UNARY_FN(SinhFn, math::sinh(x))
ANATOMY_FLOAT_UNARY_FN(CoshFn, math::cosh(x))
ANATOMY_FLOAT_UNARY_FN(TanhFn, math::tanh(x))
ANATOMY_FLOAT_UNARY_FN(ErfFn, math::erf(x))
ANATOMY_FLOAT_UNARY_FN(SigmoidFn, M(1) / (M(1) + math::exp(-x)))
// x / (1 + exp(-x)): NaN at -inf, as PyTorch's.
ANATOMY_FLOAT_UNARY_FN(SiluFn, x / (M(1) + math::exp(-x)))
// x * Phi(x), Phi through erf.
ANATOMY_FLOAT_UNARY_FN(GeluFn, x* M(0.5) * (M(1) + math::erf(x * M(0.70710678118654752440))))
// PyTorch's tanh approximation: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
ANATOMY_FLOAT_UNARY_FN(GeluTanhFn,
                       M(0.5) * x * (M(1) + math::tanh(M(0.79788456080286535588) * (x + M(0.044715) * x * x * x))))
// a = beta, b = threshold. Above the threshold log1p(exp(beta x)) / beta equals x to working
// precision (and exp would overflow): PyTorch's rule.
ANATOMY_FLOAT_UNARY_FN(SoftplusFn, x* this->a > this->b ? x : math::log1p(math::exp(x * this->a)) / this->a)
ANATOMY_FLOAT_UNARY_FN(Log10Fn, math::log10(x))
ANATOMY_FLOAT_UNARY_FN(AsinFn, math::asin(x))
ANATOMY_FLOAT_UNARY_FN(AcosFn, math::acos(x))
ANATOMY_FLOAT_UNARY_FN(AtanFn, math::atan(x))
ANATOMY_FLOAT_UNARY_FN(AsinhFn, math::asinh(x))
ANATOMY_FLOAT_UNARY_FN(AcoshFn, math::acosh(x))
ANATOMY_FLOAT_UNARY_FN(AtanhFn, math::atanh(x))
ANATOMY_FLOAT_UNARY_FN(LgammaFn, math::lgamma(x))
ANATOMY_FLOAT_UNARY_FN(DigammaFn, digamma(x))
ANATOMY_FLOAT_UNARY_FN(ErfcFn, math::erfc(x))
ANATOMY_FLOAT_UNARY_FN(ErfinvFn, erfinv(x))
// x - trunc(x): the sign of x, and NaN at +-inf (inf - inf), as PyTorch's.
ANATOMY_FLOAT_UNARY_FN(FracFn, x - math::trunc(x))
// a = n, a whole number >= 0.
ANATOMY_FLOAT_UNARY_FN(PolygammaFn, polygamma(this->a, x))
// x tanh(softplus(x)); above about 88 (fp32) exp overflows to inf and the result is x.
ANATOMY_FLOAT_UNARY_FN(MishFn, x* math::tanh(math::log1p(math::exp(x))))
// x relu6(x + 3) / 6 and relu6(x + 3) / 6, the comparisons written so that NaN propagates.
ANATOMY_FLOAT_UNARY_FN(HardswishFn, x*(x + M(3) < M(0) ? M(0) : M(6) < x + M(3) ? M(6) : x + M(3)) / M(6))
ANATOMY_FLOAT_UNARY_FN(HardsigmoidFn, (x + M(3) < M(0) ? M(0) : M(6) < x + M(3) ? M(6) : x + M(3)) / M(6))
// a = negative_slope.
ANATOMY_FLOAT_UNARY_FN(LeakyReluFn, x > M(0) ? x : x * this->a)
// a = alpha, b = scale, c = input_scale (PyTorch's elu; selu passes its two constants).
ANATOMY_FLOAT_UNARY_FN(EluFn, x <= M(0) ? math::expm1(x * this->c) * this->a * this->b : x * this->b)
#undef ANATOMY_FLOAT_UNARY_FN

// a = eps, negative without eps: x clamped to [eps, 1 - eps] first, then log(x / (1 - x)).
template <typename T>
struct LogitFn : UnaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T v) const {
    using M = opmath_t<T>;
    M x = M(v);
    if (this->a >= M(0)) {
      const M lo = this->a, hi = M(1) - this->a;
      x = x < lo ? lo : x > hi ? hi : x;
    }
    return static_cast<T>(math::log(x / (M(1) - x)));
  }
};

// ---- predicates: a bool from T's value; integers are never NaN or infinite ----

template <typename T>
struct LogicalNotFn : UnaryFn<T> {
  ANATOMY_HOST_DEVICE bool operator()(T x) const { return opmath_t<T>(x) == opmath_t<T>(0); }
};
#define ANATOMY_FLOAT_PREDICATE_FN(Name, expr, integer) \
  template <typename T>                                 \
  struct Name : UnaryFn<T> {                            \
    ANATOMY_HOST_DEVICE bool operator()(T v) const {    \
      if constexpr (!is_floating_v<T>) return integer;  \
      else {                                            \
        const opmath_t<T> x = opmath_t<T>(v);           \
        return expr;                                    \
      }                                                 \
    }                                                   \
  };
ANATOMY_FLOAT_PREDICATE_FN(IsnanFn, math::isnan(x), false)
ANATOMY_FLOAT_PREDICATE_FN(IsinfFn, math::isinf(x), false)
ANATOMY_FLOAT_PREDICATE_FN(IsfiniteFn, math::isfinite(x), true)
ANATOMY_FLOAT_PREDICATE_FN(IsposinfFn, math::isinf(x) && x > 0, false)
ANATOMY_FLOAT_PREDICATE_FN(IsneginfFn, math::isinf(x) && x < 0, false)
#undef ANATOMY_FLOAT_PREDICATE_FN
// The sign bit: true for -0.0 and for a NaN whose sign bit is set. Read through copysign, not
// std::signbit, whose vectorized form GCC 12 fails to compile (an internal compiler error).
template <typename T>
struct SignbitFn : UnaryFn<T> {
  ANATOMY_HOST_DEVICE bool operator()(T v) const {
    if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) return false;
    else if constexpr (is_int_v<T>) return v < 0;
    else return math::copysign(opmath_t<T>(1), opmath_t<T>(v)) < opmath_t<T>(0);
  }
};

}  // namespace anatomy::elementwise
