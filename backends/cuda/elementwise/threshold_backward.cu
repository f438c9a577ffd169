// CUDA kernel of threshold_backward (relu's gradient, PyTorch's ReluBackward0): one kernel that
// reads grad_output and self and writes 0 where self <= threshold, grad_output elsewhere. The
// CPU's rule (backends/cpu/binary_cpu.cpp): fp16 and bf16 compare in float, and a NaN self
// compares false, so its gradient passes.
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"

namespace anatomy::cuda {
namespace {

template <typename T>
struct ThresholdBackwardOp {
  opmath_t<T> threshold;
  __device__ T operator()(T grad, T self) const { return opmath_t<T>(self) <= threshold ? T(0) : grad; }
};

// False for bool (the plan refuses it before launching).
template <typename T>
bool launch_for(const ElementwiseArgs<2>& args, double threshold_float, int64_t threshold_int, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else {
    using M = opmath_t<T>;
    const M threshold = is_floating_v<T> ? static_cast<M>(threshold_float) : static_cast<M>(threshold_int);
    launch_elementwise<2, T, T>(args, ThresholdBackwardOp<T>{threshold}, stream);
    return true;
  }
}

}  // namespace

void launch_threshold_backward(DType dtype, const ElementwiseArgs<2>& args, double threshold_float,
                               int64_t threshold_int, cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    return launch_for<typename decltype(tag)::type>(args, threshold_float, threshold_int, stream);
  });
  if (!launched) {
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_threshold_backward: not for this dtype", __FILE__,
                             __LINE__);
  }
}

}  // namespace anatomy::cuda
