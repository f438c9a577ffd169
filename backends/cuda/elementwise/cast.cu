// CUDA kernel of dtype conversions (copy_ between two dtypes on one device), one instantiation
// per (destination, source) pair over the element-wise kernel templates.
//
// Note [CUDA casts match the CPU's]
//   The CPU converts with convert<To>(From) (core/convert.h): static_cast, except that
//   fp16/bf16 go through float, conversions into them round once, and anything -> bool is
//   "nonzero" (NaN is true). For a floating value that is NaN or out of an integer type's
//   range, C++ leaves static_cast undefined, and what the CPU gives is what x86-64's truncating
//   conversions give: the "integer indefinite" value of the 32-bit or 64-bit conversion
//   (INT32_MIN, INT64_MIN), and for the 8-bit types the low byte of the 32-bit conversion
//   (300.7 -> 44 as uint8, -1.5 -> 255, NaN -> 0). CUDA's own conversions saturate instead (and
//   give 0 for NaN), as PyTorch's CUDA casts do. cast_value spells the x86 results out, so a
//   conversion gives the same bits on either device and nothing undefined runs on the GPU.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"
#include "anatomy/backends/cuda/elementwise/launch.h"

namespace anatomy::cuda {
namespace {

// x86-64's cvttss2si / cvttsd2si: truncation toward zero, INT_MIN of the width when the value is
// NaN or does not fit (both comparisons fail for NaN).
template <typename M>
__device__ __forceinline__ int32_t truncate_to_int32(M v) {
  if (v >= M(-2147483648.0) && v < M(2147483648.0)) return static_cast<int32_t>(v);
  return INT32_MIN;
}
template <typename M>
__device__ __forceinline__ int64_t truncate_to_int64(M v) {
  if (v >= M(-9223372036854775808.0) && v < M(9223372036854775808.0)) return static_cast<int64_t>(v);
  return INT64_MIN;
}

// convert() of core/convert.h, the CPU's conversion, except for a floating value going to an
// integer type, where the x86 results are spelled out (Note [CUDA casts match the CPU's]).
template <typename To, typename From>
__device__ __forceinline__ To cast_value(From v) {
  if constexpr (is_int_v<To> && is_reduced_float_v<From>) {
    return cast_value<To>(static_cast<float>(v));
  } else if constexpr (is_int_v<To> && std::is_floating_point_v<From>) {
    // 8-bit results keep the low byte of the 32-bit conversion (a modular narrowing in C++20).
    if constexpr (sizeof(To) == 8) return static_cast<To>(truncate_to_int64(v));
    else return static_cast<To>(truncate_to_int32(v));
  } else {
    return convert<To>(v);
  }
}

template <typename To, typename From>
struct CastOp {
  __device__ To operator()(From v) const { return cast_value<To>(v); }
};

}  // namespace

void launch_cast(DType dst, DType src, const ElementwiseArgs<1>& args, cudaStream_t stream) {
  const bool launched = dtype_switch(dst, [&](auto to) {
    return dtype_switch(src, [&](auto from) {
      using To = typename decltype(to)::type;
      using From = typename decltype(from)::type;
      if constexpr (std::is_same_v<To, From>) {
        return false;  // a same-dtype copy moves bits (copy.cu)
      } else {
        launch_elementwise<1, To, From>(args, CastOp<To, From>{}, stream);
        return true;
      }
    });
  });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_cast: the dtypes are equal or unknown", __FILE__, __LINE__);
  }
}

}  // namespace anatomy::cuda
