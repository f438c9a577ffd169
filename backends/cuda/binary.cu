// CUDA kernels of add, sub, mul and div: one functor per op, instantiated for every dtype. fp16
// and bf16 compute in float and round once, as on the CPU; bool add is logical or and bool mul
// logical and.
#include <type_traits>

#include "anatomy/backends/cuda/binary.h"
#include "anatomy/backends/cuda/elementwise.cuh"

namespace anatomy::cuda {
namespace {

template <typename T>
using opmath_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T>
struct AddOp {
  opmath_t<T> alpha;
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return static_cast<T>(opmath_t<T>(a) + alpha * opmath_t<T>(b));
  }
};
template <typename T>
struct SubOp {
  opmath_t<T> alpha;
  __device__ T operator()(T a, T b) const { return static_cast<T>(opmath_t<T>(a) - alpha * opmath_t<T>(b)); }
};
template <typename T>
struct MulOp {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return static_cast<T>(opmath_t<T>(a) * opmath_t<T>(b));
  }
};
template <typename T>
struct DivOp {
  __device__ T operator()(T a, T b) const { return static_cast<T>(opmath_t<T>(a) / opmath_t<T>(b)); }
};

template <typename T>
void launch_for(ArithmeticOp op, const ElementwiseArgs<2>& args, double alpha_float, int64_t alpha_int,
                cudaStream_t stream) {
  using M = opmath_t<T>;
  const M alpha = std::is_floating_point_v<M> ? static_cast<M>(alpha_float) : static_cast<M>(alpha_int);
  switch (op) {
    case ArithmeticOp::Add:
      return launch_elementwise<2, T, T>(args, AddOp<T>{alpha}, stream);
    case ArithmeticOp::Sub:
      // The host refuses bool subtraction before it gets here.
      if constexpr (!std::is_same_v<T, bool>) return launch_elementwise<2, T, T>(args, SubOp<T>{alpha}, stream);
      break;
    case ArithmeticOp::Mul:
      return launch_elementwise<2, T, T>(args, MulOp<T>{}, stream);
    case ArithmeticOp::Div:
      // The plan promotes integers to float: division is always floating.
      if constexpr (!std::is_integral_v<T>) return launch_elementwise<2, T, T>(args, DivOp<T>{}, stream);
      break;
  }
  detail::throw_cuda_error(cudaErrorInvalidValue, "launch_arithmetic: op and dtype do not go together", __FILE__,
                           __LINE__);
}

}  // namespace

void launch_arithmetic(ArithmeticOp op, DType dtype, const ElementwiseArgs<2>& args, double alpha_float,
                       int64_t alpha_int, cudaStream_t stream) {
  switch (dtype) {
#define ANATOMY_ARITH_CASE(type, name, short_name, long_name) \
  case DType::name:                                           \
    return launch_for<type>(op, args, alpha_float, alpha_int, stream);
    ANATOMY_FORALL_DTYPES(ANATOMY_ARITH_CASE)
#undef ANATOMY_ARITH_CASE
  }
  detail::throw_cuda_error(cudaErrorInvalidValue, "launch_arithmetic: unknown dtype", __FILE__, __LINE__);
}

}  // namespace anatomy::cuda
