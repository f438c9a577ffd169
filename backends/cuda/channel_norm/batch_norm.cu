// CUDA batch_norm forward (channel_sums.cuh): training takes each channel's shifted sums, a
// per-channel finalize turns them into the mean, the biased variance and 1/sqrt(var + eps)
// (and updates the running statistics), then one element-wise pass writes the output. Eval
// skips the sums. fp16, bf16 and fp32 compute in fp32, fp64 in fp64.
#include "anatomy/backends/cuda/channel_norm/channel_sums.cuh"
#include "anatomy/backends/cuda/common/dtype_switch.h"

namespace anatomy::cuda {
namespace channel_norm {
namespace {

template <typename A>
struct ForwardFinalizeArgs {
  const A* part_a;
  const A* part_b;
  const A* center;
  const A* weight;
  const A* bias;
  A* running_mean;
  A* running_var;
  A* save_mean;
  A* save_invstd;
  A* batch_var;
  A* scale;  // k1 of apply
  A* shift;  // k0 of apply
  int64_t C, splits, count;
  A momentum, eps;
  bool training;
};

// Per channel (combine_splits' blocks): the splits added in order, then the statistics and
// apply's coefficients: y = (x - mean) * (w invstd) + b.
template <typename A>
__global__ void forward_finalize_kernel(ForwardFinalizeArgs<A> a) {
  const Terms2<A> sums = a.training ? combine_splits(a.part_a, a.part_b, a.C, a.splits) : Terms2<A>{A(0), A(0)};
  const int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  if (threadIdx.y != 0 || c >= a.C) return;
  A mean, var;
  if (a.training) {
    const A n = static_cast<A>(a.count);
    const A d = sums.a / n;
    mean = a.center[c] + d;
    var = sums.b / n - d * d;
    if (var < A(0)) var = A(0);  // rounding; a NaN stays
    a.batch_var[c] = var;
    if (a.running_mean != nullptr) {
      const A unbiased = a.count > 1 ? var * n / (n - A(1)) : var;
      a.running_mean[c] = (A(1) - a.momentum) * a.running_mean[c] + a.momentum * mean;
      a.running_var[c] = (A(1) - a.momentum) * a.running_var[c] + a.momentum * unbiased;
    }
  } else {
    mean = a.running_mean[c];
    var = a.running_var[c];
  }
  const A invstd = A(1) / sqrt(var + a.eps);
  a.save_mean[c] = mean;
  a.save_invstd[c] = invstd;
  a.scale[c] = (a.weight != nullptr ? a.weight[c] : A(1)) * invstd;
  a.shift[c] = a.bias != nullptr ? a.bias[c] : A(0);
}

template <typename T>
void forward_for(const ChannelShape& s, const BatchNormForwardBuffers& b, bool training, double momentum, double eps,
                 cudaStream_t stream) {
  using A = opmath_t<T>;
  const T* x = static_cast<const T*>(b.input);
  const int64_t splits = splits_of(s, sizeof(T));
  A* scratch = static_cast<A*>(b.scratch);
  A* part_a = scratch;
  A* part_b = part_a + splits * s.C;
  A* center = part_b + splits * s.C;
  A* scale = center + s.C;
  A* shift = scale + s.C;
  if (training) {
    // Shifted by each channel's first element, which the sums kernel also leaves in `center`.
    launch_channel_sums<T, false>(s, x, static_cast<const T*>(nullptr), Centers<A>{nullptr, center}, part_a, part_b,
                                  StatTerms{}, stream);
  }
  ForwardFinalizeArgs<A> f{part_a,
                           part_b,
                           center,
                           static_cast<const A*>(b.weight),
                           static_cast<const A*>(b.bias),
                           static_cast<A*>(b.running_mean),
                           static_cast<A*>(b.running_var),
                           static_cast<A*>(b.save_mean),
                           static_cast<A*>(b.save_invstd),
                           static_cast<A*>(b.batch_var),
                           scale,
                           shift,
                           s.C,
                           splits,
                           s.N * s.S,
                           static_cast<A>(momentum),
                           static_cast<A>(eps),
                           training};
  forward_finalize_kernel<A><<<finalize_grid(s.C), finalize_block(), 0, stream>>>(f);
  ANATOMY_CUDA_LAUNCH_CHECK();
  const Coefficients<A> k{static_cast<const A*>(b.save_mean), scale, shift, nullptr};
  launch_apply<T, false>(s, x, nullptr, static_cast<T*>(b.output), k, stream);
}

}  // namespace
}  // namespace channel_norm

int64_t batch_norm_scratch(DType input, const ChannelShape& shape) {
  return (2 * channel_norm::splits_of(shape, static_cast<int64_t>(element_size(input))) + 5) * shape.C;
}

void launch_batch_norm_forward(DType dtype, const ChannelShape& shape, const BatchNormForwardBuffers& b, bool training,
                               double momentum, double eps, cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (elementwise::is_floating_v<T>) {
      channel_norm::forward_for<T>(shape, b, training, momentum, eps, stream);
      return true;
    }
    return false;
  });
  if (!launched) detail::throw_cuda_error(cudaErrorInvalidValue, "launch_batch_norm_forward", __FILE__, __LINE__);
}

}  // namespace anatomy::cuda
