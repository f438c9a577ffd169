// CUDA kernels of sin, cos, tan, tanh, erf, sigmoid, silu, gelu (exact and tanh forms) and
// softplus, for the floating dtypes: the CPU's formulas (backends/cpu/unary_cpu.cpp) with CUDA's
// accurate math functions, in float for fp16 and bf16, rounded once.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"
#include "anatomy/backends/cuda/elementwise/launch.h"

namespace anatomy::cuda {
namespace {

template <typename T, ActivationOp Op>
struct ActivationFn {
  opmath_t<T> beta, threshold;  // softplus
  __device__ T operator()(T v) const {
    using M = opmath_t<T>;
    const M x = static_cast<M>(v);
    if constexpr (Op == ActivationOp::Sin) return static_cast<T>(sin(x));
    else if constexpr (Op == ActivationOp::Cos) return static_cast<T>(cos(x));
    else if constexpr (Op == ActivationOp::Tan) return static_cast<T>(tan(x));
    else if constexpr (Op == ActivationOp::Tanh) return static_cast<T>(tanh(x));
    else if constexpr (Op == ActivationOp::Erf) return static_cast<T>(erf(x));
    else if constexpr (Op == ActivationOp::Sigmoid) return static_cast<T>(M(1) / (M(1) + exp(-x)));
    else if constexpr (Op == ActivationOp::Silu) return static_cast<T>(x / (M(1) + exp(-x)));
    else if constexpr (Op == ActivationOp::Gelu) {
      constexpr M kRsqrt2 = M(0.70710678118654752440);
      return static_cast<T>(x * M(0.5) * (M(1) + erf(x * kRsqrt2)));
    } else if constexpr (Op == ActivationOp::GeluTanh) {
      constexpr M kSqrt2OverPi = M(0.79788456080286535588), kCoeff = M(0.044715);
      return static_cast<T>(M(0.5) * x * (M(1) + tanh(kSqrt2OverPi * (x + kCoeff * x * x * x))));
    } else {
      // Softplus. Above the threshold log1p(exp(beta x)) / beta is x to working precision (and
      // exp would overflow): PyTorch's rule.
      return static_cast<T>(x * beta > threshold ? x : log1p(exp(x * beta)) / beta);
    }
  }
};

template <typename T, ActivationOp Op>
bool launch_one(const ElementwiseArgs<1>& args, const UnaryConstants& k, cudaStream_t stream) {
  using M = opmath_t<T>;
  launch_elementwise<1, T, T>(args, ActivationFn<T, Op>{static_cast<M>(k.a), static_cast<M>(k.b)}, stream);
  return true;
}

template <typename T>
bool launch_for(ActivationOp op, const ElementwiseArgs<1>& args, const UnaryConstants& k, cudaStream_t stream) {
  if constexpr (is_floating_v<T>) {
    switch (op) {
      case ActivationOp::Sin: return launch_one<T, ActivationOp::Sin>(args, k, stream);
      case ActivationOp::Cos: return launch_one<T, ActivationOp::Cos>(args, k, stream);
      case ActivationOp::Tan: return launch_one<T, ActivationOp::Tan>(args, k, stream);
      case ActivationOp::Tanh: return launch_one<T, ActivationOp::Tanh>(args, k, stream);
      case ActivationOp::Erf: return launch_one<T, ActivationOp::Erf>(args, k, stream);
      case ActivationOp::Sigmoid: return launch_one<T, ActivationOp::Sigmoid>(args, k, stream);
      case ActivationOp::Silu: return launch_one<T, ActivationOp::Silu>(args, k, stream);
      case ActivationOp::Gelu: return launch_one<T, ActivationOp::Gelu>(args, k, stream);
      case ActivationOp::GeluTanh: return launch_one<T, ActivationOp::GeluTanh>(args, k, stream);
      case ActivationOp::Softplus: return launch_one<T, ActivationOp::Softplus>(args, k, stream);
    }
  }
  return false;
}

}  // namespace

void launch_activation(ActivationOp op, DType dtype, const ElementwiseArgs<1>& args, const UnaryConstants& k,
                       cudaStream_t stream) {
  const bool launched =
      dtype_switch(dtype, [&](auto tag) { return launch_for<typename decltype(tag)::type>(op, args, k, stream); });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_activation: not a floating dtype", __FILE__, __LINE__);
  }
}

}  // namespace anatomy::cuda
