// CUDA kernels of remainder (Python's: the divisor's sign), fmod (C's: the dividend's sign), pow,
// maximum and minimum (NaN propagates; also clamp with one bound) and atan2. The same rules as
// the CPU's (elementwise_math.cuh), but a zero integer divisor or a negative integer exponent in
// device memory gives a value instead of raising (Note [Integer division by zero on CUDA]).
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"

namespace anatomy::cuda {
namespace {

template <typename T>
struct RemainderOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return int_remainder(a, b);
    else return static_cast<T>(float_remainder<opmath_t<T>>(a, b));
  }
};
template <typename T>
struct FmodOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return int_fmod(a, b);
    else return static_cast<T>(fmod(opmath_t<T>(a), opmath_t<T>(b)));
  }
};
template <typename T>
struct PowOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return int_pow(a, b);
    else return static_cast<T>(pow(opmath_t<T>(a), opmath_t<T>(b)));
  }
};
// bool: maximum is or, minimum is and (what the CPU's bool kernel does).
template <typename T>
struct MaximumOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (is_int_v<T>) return a < b ? b : a;
    else return static_cast<T>(nan_max<opmath_t<T>>(a, b));
  }
};
template <typename T>
struct MinimumOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (is_int_v<T>) return b < a ? b : a;
    else return static_cast<T>(nan_min<opmath_t<T>>(a, b));
  }
};
template <typename T>
struct Atan2Op {
  __device__ T operator()(T a, T b) const { return static_cast<T>(atan2(opmath_t<T>(a), opmath_t<T>(b))); }
};

// False when the op does not take T (the host refuses those before launching).
template <typename T>
bool launch_for(MathOp op, const ElementwiseArgs<2>& args, cudaStream_t stream) {
  constexpr bool kNumeric = !std::is_same_v<T, bool>;
  switch (op) {
    case MathOp::Remainder:
      if constexpr (kNumeric) {
        launch_elementwise<2, T, T>(args, RemainderOp<T>{}, stream);
        return true;
      }
      break;
    case MathOp::Fmod:
      if constexpr (kNumeric) {
        launch_elementwise<2, T, T>(args, FmodOp<T>{}, stream);
        return true;
      }
      break;
    case MathOp::Pow:
      if constexpr (kNumeric) {
        launch_elementwise<2, T, T>(args, PowOp<T>{}, stream);
        return true;
      }
      break;
    case MathOp::Maximum:
      launch_elementwise<2, T, T>(args, MaximumOp<T>{}, stream);
      return true;
    case MathOp::Minimum:
      launch_elementwise<2, T, T>(args, MinimumOp<T>{}, stream);
      return true;
    case MathOp::Atan2:
      // The plan promotes integers to float.
      if constexpr (is_floating_v<T>) {
        launch_elementwise<2, T, T>(args, Atan2Op<T>{}, stream);
        return true;
      }
      break;
  }
  return false;
}

}  // namespace

void launch_binary_math(MathOp op, DType dtype, const ElementwiseArgs<2>& args, cudaStream_t stream) {
  const bool launched =
      dtype_switch(dtype, [&](auto tag) { return launch_for<typename decltype(tag)::type>(op, args, stream); });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_binary_math: op and dtype do not go together", __FILE__,
                             __LINE__);
  }
}

}  // namespace anatomy::cuda
