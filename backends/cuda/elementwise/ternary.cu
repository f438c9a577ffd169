// CUDA kernels of where, lerp and clamp with both bounds: four operands of the plan's common
// dtype (where's bool condition was cast to it by the plan), the CPU's rules
// (backends/cpu/binary_ternary_cpu.cpp).
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"

namespace anatomy::cuda {
namespace {

template <typename T>
struct WhereOp {
  __device__ T operator()(T condition, T a, T b) const {
    return static_cast<opmath_t<T>>(condition) != opmath_t<T>(0) ? a : b;
  }
};
// PyTorch's two-sided form: exact at both ends (weight 0 gives self, 1 gives end).
template <typename T>
struct LerpOp {
  __device__ T operator()(T a, T b, T w) const {
    using M = opmath_t<T>;
    const M x = M(a), y = M(b), t = M(w);
    return static_cast<T>(abs(t) < M(0.5) ? x + t * (y - x) : y - (y - x) * (M(1) - t));
  }
};
// NaN in any operand gives NaN (floating); min > max gives max.
template <typename T>
struct ClampOp {
  __device__ T operator()(T a, T b, T c) const {
    if constexpr (is_int_v<T>) {
      const T m = a < b ? b : a;
      return c < m ? c : m;
    } else {
      using M = opmath_t<T>;
      const M x = M(a), lo = M(b), hi = M(c);
      if (isnan(x) || isnan(lo) || isnan(hi)) return static_cast<T>(quiet_nan<M>());
      const M m = x < lo ? lo : x;
      return static_cast<T>(hi < m ? hi : m);
    }
  }
};

// False when the op does not take T (the host refuses those before launching).
template <typename T>
bool launch_for(TernaryKernelOp op, const ElementwiseArgs<3>& args, cudaStream_t stream) {
  switch (op) {
    case TernaryKernelOp::Where:
      launch_elementwise<3, T, T>(args, WhereOp<T>{}, stream);
      return true;
    case TernaryKernelOp::Lerp:
      if constexpr (is_floating_v<T>) {
        launch_elementwise<3, T, T>(args, LerpOp<T>{}, stream);
        return true;
      }
      break;
    case TernaryKernelOp::Clamp:
      if constexpr (!std::is_same_v<T, bool>) {
        launch_elementwise<3, T, T>(args, ClampOp<T>{}, stream);
        return true;
      }
      break;
  }
  return false;
}

}  // namespace

void launch_ternary(TernaryKernelOp op, DType dtype, const ElementwiseArgs<3>& args, cudaStream_t stream) {
  const bool launched =
      dtype_switch(dtype, [&](auto tag) { return launch_for<typename decltype(tag)::type>(op, args, stream); });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_ternary: op and dtype do not go together", __FILE__,
                             __LINE__);
  }
}

}  // namespace anatomy::cuda
