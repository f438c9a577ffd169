// The scalar rules of the element-wise binary operators, written once for every backend: each
// functor of the rows (dispatch/ops/binary_rows.h) is host-device code, instantiated by the CPU
// loops (backends/cpu/binary_cpu.cpp) and by the CUDA kernels
// (backends/cuda/elementwise/binary_*.cu), so both backends compute the same values. fp16 and
// bf16 compute in float (opmath_t) and round once. Integer rules never run undefined behaviour:
// arithmetic wraps in unsigned types, INT_MIN / -1 wraps, shifts are bounded.
//
// A functor is `template <typename T> struct XFn : BinaryFn<T> { R operator()(T a, T b) const; }`
// for the dtypes of its row (binary_takes_v), R being T or bool. `alpha` (from BinaryFn) is add's
// and sub's scale and threshold_backward's threshold, in the type the op computes in; the other
// ops ignore it.
//
// Note [Integer division by zero on CUDA]
//   The CPU raises ValueError for an integer zero divisor (check_binary_values, before its loop),
//   so its loops never divide by zero. A CUDA kernel cannot raise without the host waiting for
//   it, which only item(), copies to the host and printing may do. So a zero divisor held in
//   device memory gives all ones (-1; 255 for uint8) for div with rounding_mode 'trunc' or
//   'floor', remainder and fmod: one defined value, checked before any division runs. It is what
//   PyTorch's CUDA kernels return for int8, uint8 and int32, except their floor division of a
//   negative dividend (-2); their int64 results come from the hardware's undefined division
//   (4294967295 for 5 // 0). A CPU scalar divisor (`t // 0`, `t % cpu_0dim`) is read on the host
//   and raises as on the CPU (backends/cuda/elementwise/elementwise_cuda.cpp). Likewise a negative
//   integer exponent gives PyTorch's integer answer on CUDA where the CPU raises.
//   backends/cuda/README.md says the same.
#pragma once

#include "anatomy/dispatch/ops/elementwise_scalar.h"

namespace anatomy::elementwise {

// ---- integer rules ----

template <typename T>
ANATOMY_HOST_DEVICE inline T int_div_trunc(T a, T b) {
  if (b == 0) return all_ones<T>();
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrapping_neg(a);
  }
  return static_cast<T>(a / b);
}
template <typename T>
ANATOMY_HOST_DEVICE inline T int_div_floor(T a, T b) {
  if (b == 0) return all_ones<T>();
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrapping_neg(a);
  }
  T q = static_cast<T>(a / b);
  if constexpr (std::is_signed_v<T>) {  // unsigned: floor is trunc
    const T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) --q;
  }
  return q;
}
template <typename T>
ANATOMY_HOST_DEVICE inline T int_fmod(T a, T b) {
  if (b == 0) return all_ones<T>();
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}
template <typename T>
ANATOMY_HOST_DEVICE inline T int_remainder(T a, T b) {
  if (b == 0) return all_ones<T>();
  T r = int_fmod(a, b);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
  }
  return r;
}
// Wraps like repeated multiplication in T. A negative exponent gives PyTorch's integer answer: 1
// for base 1, +-1 for base -1, 0 otherwise.
template <typename T>
ANATOMY_HOST_DEVICE inline T int_pow(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  wrap_t<T> result = 1, b = static_cast<wrap_t<T>>(base);
  for (auto e = static_cast<std::make_unsigned_t<T>>(exponent); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}
// Shifts by a negative amount or by the width or more: left gives 0, right shifts by width - 1
// (fills with the sign).
template <typename T>
ANATOMY_HOST_DEVICE inline bool shift_out_of_range(T b) {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  if constexpr (std::is_signed_v<T>) return b < 0 || b >= kBits;
  else return b >= kBits;
}

// ---- floating rules (PyTorch's; M is float or double) ----

template <typename M>
ANATOMY_HOST_DEVICE inline M float_div_floor(M a, M b) {
  if (b == 0) return a / b;
  const M mod = math::fmod(a, b);
  M div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return math::copysign(M(0), a / b);
  M floordiv = math::floor(div);
  if (div - floordiv > M(0.5)) floordiv += 1;
  return floordiv;
}
template <typename M>
ANATOMY_HOST_DEVICE inline M float_remainder(M a, M b) {
  M mod = math::fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}
// NaN in either operand gives NaN.
template <typename M>
ANATOMY_HOST_DEVICE inline M nan_max(M a, M b) {
  if (math::isnan(a) || math::isnan(b)) return quiet_nan<M>();
  return a < b ? b : a;
}
template <typename M>
ANATOMY_HOST_DEVICE inline M nan_min(M a, M b) {
  if (math::isnan(a) || math::isnan(b)) return quiet_nan<M>();
  return b < a ? b : a;
}

// ---- the functors ----

template <typename T>
struct BinaryFn {
  opmath_t<T> alpha;
};

// Integer arithmetic wraps in an unsigned type; bool add is or (alpha is true, checked by the plan).
template <typename T>
struct AddFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (is_int_v<T>) return static_cast<T>(wrap_t<T>(a) + wrap_t<T>(this->alpha) * wrap_t<T>(b));
    else return static_cast<T>(opmath_t<T>(a) + this->alpha * opmath_t<T>(b));
  }
};
template <typename T>
struct SubFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return static_cast<T>(wrap_t<T>(a) - wrap_t<T>(this->alpha) * wrap_t<T>(b));
    else return static_cast<T>(opmath_t<T>(a) - this->alpha * opmath_t<T>(b));
  }
};
template <typename T>
struct MulFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (is_int_v<T>) return static_cast<T>(wrap_t<T>(a) * wrap_t<T>(b));
    else return static_cast<T>(opmath_t<T>(a) * opmath_t<T>(b));
  }
};
template <typename T>
struct DivFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(opmath_t<T>(a) / opmath_t<T>(b)); }
};
template <typename T>
struct DivTruncFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return int_div_trunc(a, b);
    else return static_cast<T>(math::trunc(opmath_t<T>(a) / opmath_t<T>(b)));
  }
};
template <typename T>
struct DivFloorFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return int_div_floor(a, b);
    else return static_cast<T>(float_div_floor<opmath_t<T>>(a, b));
  }
};
// Python's remainder: the result has the divisor's sign.
template <typename T>
struct RemainderFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return int_remainder(a, b);
    else return static_cast<T>(float_remainder<opmath_t<T>>(a, b));
  }
};
// C's fmod: the result has the dividend's sign.
template <typename T>
struct FmodFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return int_fmod(a, b);
    else return static_cast<T>(math::fmod(opmath_t<T>(a), opmath_t<T>(b)));
  }
};
template <typename T>
struct PowFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return int_pow(a, b);
    else return static_cast<T>(math::pow(opmath_t<T>(a), opmath_t<T>(b)));
  }
};
// NaN propagates; on bool maximum is or and minimum is and. Also clamp with one bound, clamp_min,
// clamp_max and max and min of two tensors.
template <typename T>
struct MaximumFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (is_int_v<T>) return a < b ? b : a;
    else return static_cast<T>(nan_max<opmath_t<T>>(a, b));
  }
};
template <typename T>
struct MinimumFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (is_int_v<T>) return b < a ? b : a;
    else return static_cast<T>(nan_min<opmath_t<T>>(a, b));
  }
};
template <typename T>
struct Atan2Fn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    return static_cast<T>(math::atan2(opmath_t<T>(a), opmath_t<T>(b)));
  }
};
// sqrt(a^2 + b^2) without overflow or underflow in between.
template <typename T>
struct HypotFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    return static_cast<T>(math::hypot(opmath_t<T>(a), opmath_t<T>(b)));
  }
};
// log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)), which neither overflows nor loses the smaller
// term; two infinities of one sign give that infinity (their difference is NaN), NaN propagates.
template <typename T>
struct LogaddexpFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    using M = opmath_t<T>;
    const M x = M(a), y = M(b);
    if (math::isinf(x) && x == y) return a;
    const M m = x < y ? y : x;
    return static_cast<T>(m + math::log1p(math::exp(-math::fabs(x - y))));
  }
};
// log2(2^a + 2^b), the same way in base 2.
template <typename T>
struct Logaddexp2Fn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    using M = opmath_t<T>;
    const M x = M(a), y = M(b);
    if (math::isinf(x) && x == y) return a;
    const M m = x < y ? y : x;
    constexpr M kInvLog2 = M(1.4426950408889634);
    return static_cast<T>(m + math::log1p(math::exp2(-math::fabs(x - y))) * kInvLog2);
  }
};
// a * log(b), but 0 where a == 0 (so 0 * log(0) is 0) unless b is NaN.
template <typename T>
struct XlogyFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    using M = opmath_t<T>;
    const M x = M(a), y = M(b);
    if (math::isnan(y)) return static_cast<T>(quiet_nan<M>());
    if (x == M(0)) return T(0);
    return static_cast<T>(x * math::log(y));
  }
};
// |a| with b's sign bit: -0.0 and a NaN's sign count.
template <typename T>
struct CopysignFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    return static_cast<T>(math::copysign(opmath_t<T>(a), opmath_t<T>(b)));
  }
};
// relu's gradient (PyTorch's ReluBackward0): out = self <= threshold ? 0 : grad; NaN <= threshold
// is false, so a NaN self passes the gradient through.
template <typename T>
struct ThresholdBackwardFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T grad, T self) const { return opmath_t<T>(self) <= this->alpha ? T(0) : grad; }
};

// gelu's gradient in one pass (PyTorch's GeluBackward0 calls gelu_backward): grad times the
// derivative of x Phi(x), Phi(x) + x phi(x), in the computation type (fp32 for fp16 and bf16,
// rounded once), where the operators' formula rounds at every step. Phi as erfc(-x / sqrt 2) / 2:
// 1 + erf(x / sqrt 2) cancels for negative x.
template <typename T>
struct GeluBackwardFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T grad, T self) const {
    using A = opmath_t<T>;
    const A x = A(self);
    const A cdf = A(0.5) * math::erfc(-x * A(0.70710678118654752440));
    const A pdf = math::exp(A(-0.5) * x * x) * A(0.39894228040143267794);
    // x phi(x) is 0 where phi underflows (an infinite x would make it inf times 0).
    return static_cast<T>(A(grad) * (cdf + (pdf == A(0) ? A(0) : x * pdf)));
  }
};
// The tanh approximation's: with u = sqrt(2/pi) (x + 0.044715 x^3) and t = tanh(u),
// d/dx [x/2 (1 + t)] = (1 + t) / 2 + x/2 (1 - t^2) sqrt(2/pi) (1 + 3 0.044715 x^2). (1 + t) / 2
// is s = sigmoid(2u) = 1 / (1 + e), e = exp(-2u), and 1 - t^2 = 4 s (1 - s) with 1 - s = e s:
// one exponential, and no cancellation of 1 + t where t is near -1 (the derivative's small
// negative lobe). An overflowing e gives s = 0 and 1 - s = 1, not inf times 0, and the second
// term is 0 wherever s (1 - s) is, however large x^2 grows.
template <typename T>
struct GeluBackwardTanhFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T grad, T self) const {
    using A = opmath_t<T>;
    constexpr A kSqrt2OverPi = A(0.79788456080286535588), kKappa = A(0.044715);
    const A x = A(self), x_sq = x * x;
    const A two_u = A(2) * kSqrt2OverPi * (x + kKappa * x_sq * x);
    const A e = math::exp(-two_u), s = A(1) / (A(1) + e);
    const A sr = s * (e < infinity<A>() ? e * s : A(1));
    const A right = sr == A(0) ? A(0) : A(2) * x * sr * kSqrt2OverPi * (A(1) + A(3) * kKappa * x_sq);
    return static_cast<T>(A(grad) * (s + right));
  }
};

// Comparisons: fp16 and bf16 compare as float, so NaN compares as IEEE says.
#define ANATOMY_COMPARE_FN(Name, expr)                          \
  template <typename T>                                         \
  struct Name : BinaryFn<T> {                                   \
    ANATOMY_HOST_DEVICE bool operator()(T a, T b) const {       \
      const opmath_t<T> x = opmath_t<T>(a), y = opmath_t<T>(b); \
      return expr;                                              \
    }                                                           \
  };
ANATOMY_COMPARE_FN(EqFn, x == y)
ANATOMY_COMPARE_FN(NeFn, x != y)
ANATOMY_COMPARE_FN(LtFn, x < y)
ANATOMY_COMPARE_FN(LeFn, x <= y)
ANATOMY_COMPARE_FN(GtFn, x > y)
ANATOMY_COMPARE_FN(GeFn, x >= y)
// Logical ops: nonzero is true (NaN too).
ANATOMY_COMPARE_FN(LogicalAndFn, x != opmath_t<T>(0) && y != opmath_t<T>(0))
ANATOMY_COMPARE_FN(LogicalOrFn, x != opmath_t<T>(0) || y != opmath_t<T>(0))
ANATOMY_COMPARE_FN(LogicalXorFn, (x != opmath_t<T>(0)) != (y != opmath_t<T>(0)))
#undef ANATOMY_COMPARE_FN

// Integers and bool (the shifts: integers only).
template <typename T>
struct BitwiseAndFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
template <typename T>
struct BitwiseOrFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
template <typename T>
struct BitwiseXorFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};
template <typename T>
struct LeftShiftFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    if (shift_out_of_range(b)) return 0;
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) << b);
  }
};
template <typename T>
struct RightShiftFn : BinaryFn<T> {
  ANATOMY_HOST_DEVICE T operator()(T a, T b) const {
    constexpr T kBits = static_cast<T>(sizeof(T) * 8);
    if (shift_out_of_range(b)) return static_cast<T>(a >> (kBits - 1));
    return static_cast<T>(a >> b);
  }
};

}  // namespace anatomy::elementwise
