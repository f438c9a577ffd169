// The scalar rules of where, lerp and clamp with both bounds, written once for every backend: the
// functors of the ternary rows (core/op_lists.h), instantiated by the CPU loop
// (backends/cpu/binary_ternary_cpu.cpp) and by the CUDA kernels
// (backends/cuda/elementwise/ternary.cu). All three operands have the plan's common dtype
// (where's bool condition was cast to it by the plan); fp16 and bf16 compute in float.
#pragma once

#include "anatomy/dispatch/ops/elementwise_scalar.h"

namespace anatomy::elementwise {

template <typename T>
struct WhereFn {
  ANATOMY_HOST_DEVICE T operator()(T condition, T a, T b) const {
    return opmath_t<T>(condition) != opmath_t<T>(0) ? a : b;
  }
};
// PyTorch's two-sided form: exact at both ends (weight 0 gives self, 1 gives end).
template <typename T>
struct LerpFn {
  ANATOMY_HOST_DEVICE T operator()(T a, T b, T w) const {
    using M = opmath_t<T>;
    const M x = M(a), y = M(b), t = M(w);
    return static_cast<T>(math::fabs(t) < M(0.5) ? x + t * (y - x) : y - (y - x) * (M(1) - t));
  }
};
// NaN in any operand gives NaN (floating); min > max gives max.
template <typename T>
struct ClampFn {
  ANATOMY_HOST_DEVICE T operator()(T a, T b, T c) const {
    if constexpr (is_int_v<T>) {
      const T m = a < b ? b : a;
      return c < m ? c : m;
    } else {
      using M = opmath_t<T>;
      const M x = M(a), lo = M(b), hi = M(c);
      if (math::isnan(x) || math::isnan(lo) || math::isnan(hi)) return static_cast<T>(quiet_nan<M>());
      const M m = x < lo ? lo : x;
      return static_cast<T>(hi < m ? hi : m);
    }
  }
};

}  // namespace anatomy::elementwise
