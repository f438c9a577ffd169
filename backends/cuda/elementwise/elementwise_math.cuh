// The scalar rules of the element-wise CUDA kernels: the device twins of the CPU loops' rules
// (backends/cpu/binary_cpu.cpp, unary_cpu.cpp), written the same way so that both backends give
// the same values. fp16 and bf16 compute in float (opmath_t) and round once. Integer rules never
// run undefined behaviour: arithmetic wraps in unsigned types, INT_MIN / -1 wraps, shifts are
// bounded, and a zero divisor gives a defined value (Note [Integer division by zero on CUDA]).
//
// Device code only: included by .cu files.
#pragma once

#include <cstdint>
#include <type_traits>

#include "anatomy/core/bfloat16.h"
#include "anatomy/core/convert.h"
#include "anatomy/core/half.h"

namespace anatomy::cuda {

using anatomy::is_reduced_float_v;  // core/convert.h
template <typename T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;
// Integers other than bool.
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The type arithmetic happens in: float for the 2-byte floats, the type itself otherwise.
template <typename T>
using opmath_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

// The unsigned type integer arithmetic wraps in (at least 32 bits, as the CPU's).
template <typename T>
using wrap_t = std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>;

template <typename M>
__device__ __forceinline__ M quiet_nan() {
  if constexpr (std::is_same_v<M, double>) return __longlong_as_double(0x7ff8000000000000LL);
  else return __int_as_float(0x7fc00000);
}

// ---- integers ----

template <typename T>
__device__ __forceinline__ T wrapping_neg(T a) {
  return static_cast<T>(wrap_t<T>(0) - static_cast<wrap_t<T>>(a));
}

// Note [Integer division by zero on CUDA]
//   The CPU kernels raise ValueError for an integer zero divisor; a kernel cannot raise without
//   the host waiting for it, which only item(), copies to the host and printing may do. So a
//   zero divisor held in device memory gives all ones (-1; 255 for uint8) for div with
//   rounding_mode 'trunc' or 'floor', remainder and fmod: one defined value, checked before any
//   division runs. It is what PyTorch's CUDA kernels return for int8, uint8 and int32, except
//   their floor division of a negative dividend (-2); their int64 results come from the
//   hardware's undefined division (4294967295 for 5 // 0). A CPU scalar divisor (`t // 0`,
//   `t % cpu_0dim`) is read on the host and raises as on the CPU (binary_cuda.cpp).
//   backends/cuda/README.md says the same.
template <typename T>
__device__ __forceinline__ T all_ones() {
  return static_cast<T>(~wrap_t<T>(0));
}

template <typename T>
__device__ __forceinline__ T int_div_trunc(T a, T b) {
  if (b == 0) return all_ones<T>();
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrapping_neg(a);
  }
  return static_cast<T>(a / b);
}
template <typename T>
__device__ __forceinline__ T int_div_floor(T a, T b) {
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
__device__ __forceinline__ T int_fmod(T a, T b) {
  if (b == 0) return all_ones<T>();
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}
template <typename T>
__device__ __forceinline__ T int_remainder(T a, T b) {
  if (b == 0) return all_ones<T>();
  T r = int_fmod(a, b);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
  }
  return r;
}
// Wraps like repeated multiplication in T. A negative exponent (the CPU raises before its loop;
// here it may sit in device memory) gives PyTorch's integer answer: 1 for base 1, +-1 for base
// -1, 0 otherwise.
template <typename T>
__device__ __forceinline__ T int_pow(T base, T exponent) {
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
// Shifts by a negative amount or by the width or more: left gives 0, right shifts by width - 1.
template <typename T>
__device__ __forceinline__ bool shift_out_of_range(T b) {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  if constexpr (std::is_signed_v<T>) return b < 0 || b >= kBits;
  else return b >= kBits;
}
template <typename T>
__device__ __forceinline__ T shift_left(T a, T b) {
  if (shift_out_of_range(b)) return 0;
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) << b);
}
template <typename T>
__device__ __forceinline__ T shift_right(T a, T b) {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  if (shift_out_of_range(b)) return static_cast<T>(a >> (kBits - 1));
  return static_cast<T>(a >> b);
}

// ---- floating (M is float or double; the CUDA math library's overloads pick the width) ----

template <typename M>
__device__ __forceinline__ M float_div_floor(M a, M b) {
  if (b == 0) return a / b;
  const M mod = fmod(a, b);
  M div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return copysign(M(0), a / b);
  M floordiv = floor(div);
  if (div - floordiv > M(0.5)) floordiv += 1;
  return floordiv;
}
template <typename M>
__device__ __forceinline__ M float_remainder(M a, M b) {
  M mod = fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}
// NaN in either operand gives NaN.
template <typename M>
__device__ __forceinline__ M nan_max(M a, M b) {
  if (isnan(a) || isnan(b)) return quiet_nan<M>();
  return a < b ? b : a;
}
template <typename M>
__device__ __forceinline__ M nan_min(M a, M b) {
  if (isnan(a) || isnan(b)) return quiet_nan<M>();
  return b < a ? b : a;
}

}  // namespace anatomy::cuda
