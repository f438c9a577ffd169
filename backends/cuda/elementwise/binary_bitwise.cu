// CUDA kernels of bitwise and, or, xor (integers and bool) and the shifts (integers): shifts by a
// negative amount or by the width or more give 0 (left) or shift by width - 1 (right), as on the
// CPU, never the hardware's undefined result.
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"

namespace anatomy::cuda {
namespace {

template <typename T>
struct AndOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return static_cast<T>(a & b);
  }
};
template <typename T>
struct OrOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return static_cast<T>(a | b);
  }
};
template <typename T>
struct XorOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a != b;
    else return static_cast<T>(a ^ b);
  }
};
template <typename T>
struct LeftShiftOp {
  __device__ T operator()(T a, T b) const { return shift_left(a, b); }
};
template <typename T>
struct RightShiftOp {
  __device__ T operator()(T a, T b) const { return shift_right(a, b); }
};

// False when the op does not take T (the host refuses floating dtypes, and bool shifts).
template <typename T>
bool launch_for(BitwiseOp op, const ElementwiseArgs<2>& args, cudaStream_t stream) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case BitwiseOp::And:
        launch_elementwise<2, T, T>(args, AndOp<T>{}, stream);
        return true;
      case BitwiseOp::Or:
        launch_elementwise<2, T, T>(args, OrOp<T>{}, stream);
        return true;
      case BitwiseOp::Xor:
        launch_elementwise<2, T, T>(args, XorOp<T>{}, stream);
        return true;
      case BitwiseOp::LeftShift:
        if constexpr (is_int_v<T>) {
          launch_elementwise<2, T, T>(args, LeftShiftOp<T>{}, stream);
          return true;
        }
        break;
      case BitwiseOp::RightShift:
        if constexpr (is_int_v<T>) {
          launch_elementwise<2, T, T>(args, RightShiftOp<T>{}, stream);
          return true;
        }
        break;
    }
  }
  return false;
}

}  // namespace

void launch_bitwise(BitwiseOp op, DType dtype, const ElementwiseArgs<2>& args, cudaStream_t stream) {
  const bool launched =
      dtype_switch(dtype, [&](auto tag) { return launch_for<typename decltype(tag)::type>(op, args, stream); });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_bitwise: op and dtype do not go together", __FILE__,
                             __LINE__);
  }
}

}  // namespace anatomy::cuda
