// CUDA kernels of add, sub, mul and div (true, trunc and floor division): one functor per op,
// instantiated for the dtypes it takes. fp16 and bf16 compute in float and round once, as on the
// CPU; integer arithmetic wraps; bool add is logical or and bool mul logical and.
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"

namespace anatomy::cuda {
namespace {

template <typename T>
struct AddOp {
  opmath_t<T> alpha;
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;  // alpha is true (checked on the host)
    else if constexpr (is_int_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(alpha) * static_cast<U>(b));
    } else return static_cast<T>(opmath_t<T>(a) + alpha * opmath_t<T>(b));
  }
};
template <typename T>
struct SubOp {
  opmath_t<T> alpha;
  __device__ T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) - static_cast<U>(alpha) * static_cast<U>(b));
    } else return static_cast<T>(opmath_t<T>(a) - alpha * opmath_t<T>(b));
  }
};
template <typename T>
struct MulOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (is_int_v<T>) return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
    else return static_cast<T>(opmath_t<T>(a) * opmath_t<T>(b));
  }
};
template <typename T>
struct DivOp {
  __device__ T operator()(T a, T b) const { return static_cast<T>(opmath_t<T>(a) / opmath_t<T>(b)); }
};
template <typename T>
struct DivTruncOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return int_div_trunc(a, b);
    else return static_cast<T>(trunc(opmath_t<T>(a) / opmath_t<T>(b)));
  }
};
template <typename T>
struct DivFloorOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return int_div_floor(a, b);
    else return static_cast<T>(float_div_floor<opmath_t<T>>(a, b));
  }
};

// False when the op does not take T (the host refuses those before launching).
template <typename T>
bool launch_for(ArithmeticOp op, const ElementwiseArgs<2>& args, double alpha_float, int64_t alpha_int,
                cudaStream_t stream) {
  using M = opmath_t<T>;
  const M alpha = is_floating_v<T> ? static_cast<M>(alpha_float) : static_cast<M>(alpha_int);
  constexpr bool kBool = std::is_same_v<T, bool>;
  switch (op) {
    case ArithmeticOp::Add:
      launch_elementwise<2, T, T>(args, AddOp<T>{alpha}, stream);
      return true;
    case ArithmeticOp::Sub:
      if constexpr (!kBool) {
        launch_elementwise<2, T, T>(args, SubOp<T>{alpha}, stream);
        return true;
      }
      break;
    case ArithmeticOp::Mul:
      launch_elementwise<2, T, T>(args, MulOp<T>{}, stream);
      return true;
    case ArithmeticOp::Div:
      // The plan promotes integers to float: true division is always floating.
      if constexpr (is_floating_v<T>) {
        launch_elementwise<2, T, T>(args, DivOp<T>{}, stream);
        return true;
      }
      break;
    case ArithmeticOp::DivTrunc:
      if constexpr (!kBool) {
        launch_elementwise<2, T, T>(args, DivTruncOp<T>{}, stream);
        return true;
      }
      break;
    case ArithmeticOp::DivFloor:
      if constexpr (!kBool) {
        launch_elementwise<2, T, T>(args, DivFloorOp<T>{}, stream);
        return true;
      }
      break;
  }
  return false;
}

}  // namespace

void launch_arithmetic(ArithmeticOp op, DType dtype, const ElementwiseArgs<2>& args, double alpha_float,
                       int64_t alpha_int, cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    return launch_for<typename decltype(tag)::type>(op, args, alpha_float, alpha_int, stream);
  });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_arithmetic: op and dtype do not go together", __FILE__,
                             __LINE__);
  }
}

}  // namespace anatomy::cuda
