// to_compute / from_compute: fp16 and bf16 to and from their computation type (fp32) with the
// hardware's conversion instructions, for kernels that convert each element more than once or
// whose conversions are a large part of their instructions.
//
// Note [Hardware conversions]
//   Half's and BFloat16's own conversions (core/half.h, core/bfloat16.h) are integer code, so that
//   host and device give the same bits: about ten instructions to widen a half, twenty to round a
//   float to one. A LayerNorm over fp16 rows of 2048 is bound by instructions rather than by
//   memory (its rows fit in L2), and those conversions are a large part of them. cvt widens
//   exactly and narrows to nearest even, as the integer code does, so the two give the same bits
//   for every number, infinity and zero; only a NaN's payload may differ, and the NaNs these
//   kernels write come out of arithmetic, whose payloads no reference defines.
//
// Device code only: included by .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "anatomy/core/bfloat16.h"
#include "anatomy/core/half.h"

namespace anatomy::cuda {

template <typename A, typename T>
__device__ __forceinline__ A to_compute(T v) {
  if constexpr (std::is_same_v<T, Half> && std::is_same_v<A, float>) return __half2float(__ushort_as_half(v.x));
  else return static_cast<A>(v);
}

template <typename T, typename A>
__device__ __forceinline__ T from_compute(A v) {
  if constexpr (std::is_same_v<T, Half> && std::is_same_v<A, float>) {
    return Half(__half_as_ushort(__float2half_rn(v)), Half::from_bits_t{});
  } else if constexpr (std::is_same_v<T, BFloat16> && std::is_same_v<A, float>) {
    return BFloat16::from_bits(__bfloat16_as_ushort(__float2bfloat16_rn(v)));
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace anatomy::cuda
