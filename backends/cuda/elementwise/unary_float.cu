// CUDA kernels of exp, exp2, expm1, log, log1p, log2, sqrt, rsqrt and reciprocal, for the
// floating dtypes (the plan promotes integer inputs). CUDA's accurate math functions (expf,
// log1pf, ...; not the __expf intrinsics), in float for fp16 and bf16, rounded once; rsqrt is
// 1 / sqrt(x), as on the CPU.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"
#include "anatomy/backends/cuda/elementwise/launch.h"

namespace anatomy::cuda {
namespace {

template <typename T, FloatUnaryOp Op>
struct FloatFn {
  __device__ T operator()(T v) const {
    using M = opmath_t<T>;
    const M x = static_cast<M>(v);
    if constexpr (Op == FloatUnaryOp::Exp) return static_cast<T>(exp(x));
    else if constexpr (Op == FloatUnaryOp::Exp2) return static_cast<T>(exp2(x));
    else if constexpr (Op == FloatUnaryOp::Expm1) return static_cast<T>(expm1(x));
    else if constexpr (Op == FloatUnaryOp::Log) return static_cast<T>(log(x));
    else if constexpr (Op == FloatUnaryOp::Log1p) return static_cast<T>(log1p(x));
    else if constexpr (Op == FloatUnaryOp::Log2) return static_cast<T>(log2(x));
    else if constexpr (Op == FloatUnaryOp::Sqrt) return static_cast<T>(sqrt(x));
    else if constexpr (Op == FloatUnaryOp::Rsqrt) return static_cast<T>(M(1) / sqrt(x));
    else return static_cast<T>(M(1) / x);  // Reciprocal
  }
};

template <typename T, FloatUnaryOp Op>
bool launch_one(const ElementwiseArgs<1>& args, cudaStream_t stream) {
  launch_elementwise<1, T, T>(args, FloatFn<T, Op>{}, stream);
  return true;
}

template <typename T>
bool launch_for(FloatUnaryOp op, const ElementwiseArgs<1>& args, cudaStream_t stream) {
  if constexpr (is_floating_v<T>) {
    switch (op) {
      case FloatUnaryOp::Exp: return launch_one<T, FloatUnaryOp::Exp>(args, stream);
      case FloatUnaryOp::Exp2: return launch_one<T, FloatUnaryOp::Exp2>(args, stream);
      case FloatUnaryOp::Expm1: return launch_one<T, FloatUnaryOp::Expm1>(args, stream);
      case FloatUnaryOp::Log: return launch_one<T, FloatUnaryOp::Log>(args, stream);
      case FloatUnaryOp::Log1p: return launch_one<T, FloatUnaryOp::Log1p>(args, stream);
      case FloatUnaryOp::Log2: return launch_one<T, FloatUnaryOp::Log2>(args, stream);
      case FloatUnaryOp::Sqrt: return launch_one<T, FloatUnaryOp::Sqrt>(args, stream);
      case FloatUnaryOp::Rsqrt: return launch_one<T, FloatUnaryOp::Rsqrt>(args, stream);
      case FloatUnaryOp::Reciprocal: return launch_one<T, FloatUnaryOp::Reciprocal>(args, stream);
    }
  }
  return false;
}

}  // namespace

void launch_unary_float(FloatUnaryOp op, DType dtype, const ElementwiseArgs<1>& args, cudaStream_t stream) {
  const bool launched =
      dtype_switch(dtype, [&](auto tag) { return launch_for<typename decltype(tag)::type>(op, args, stream); });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_unary_float: not a floating dtype", __FILE__, __LINE__);
  }
}

}  // namespace anatomy::cuda
