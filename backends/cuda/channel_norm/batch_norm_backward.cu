// CUDA batch_norm backward (channel_sums.cuh): one pass of per-channel sums of dy and
// dy (x - mean), a per-channel finalize into the weight and bias gradients and the coefficients
// of dx, and one element-wise pass for dx:
//   dx = w invstd (dy - sum(dy) / M - (x - mean) invstd^2 sum(dy (x - mean)) / M)   (training)
//   dx = w invstd dy                                                                 (eval)
// M = N * S. Eval with only dx wanted needs no sums.
#include "anatomy/backends/cuda/channel_norm/channel_sums.cuh"
#include "anatomy/backends/cuda/common/dtype_switch.h"

namespace anatomy::cuda {
namespace channel_norm {
namespace {

template <typename A>
struct BackwardFinalizeArgs {
  const A* part_a;  // sums of dy
  const A* part_b;  // sums of dy (x - mean)
  const A* weight;
  const A* invstd;
  A* grad_weight;
  A* grad_bias;
  A* k1;  // of (x - mean)
  A* k0;
  A* k2;  // of dy
  int64_t C, splits, count;
  bool sums, train;
};

// Per channel (combine_splits' blocks).
template <typename A>
__global__ void backward_finalize_kernel(BackwardFinalizeArgs<A> a) {
  const Terms2<A> sums = a.sums ? combine_splits(a.part_a, a.part_b, a.C, a.splits) : Terms2<A>{A(0), A(0)};
  const int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  if (threadIdx.y != 0 || c >= a.C) return;
  const A sum_dy = sums.a, sum_dy_xmu = sums.b;
  const A invstd = a.invstd[c];
  const A w = a.weight != nullptr ? a.weight[c] : A(1);
  if (a.grad_weight != nullptr) a.grad_weight[c] = sum_dy_xmu * invstd;
  if (a.grad_bias != nullptr) a.grad_bias[c] = sum_dy;
  const A n = static_cast<A>(a.count);
  a.k2[c] = w * invstd;
  a.k1[c] = a.train ? -w * invstd * invstd * invstd * sum_dy_xmu / n : A(0);
  a.k0[c] = a.train ? -w * invstd * sum_dy / n : A(0);
}

template <typename T>
void backward_for(const ChannelShape& s, const BatchNormBackwardBuffers& b, bool train, cudaStream_t stream) {
  using A = opmath_t<T>;
  const T* x = static_cast<const T*>(b.input);
  const T* dy = static_cast<const T*>(b.grad);
  const int64_t splits = splits_of(s, sizeof(T));
  A* part_a = static_cast<A*>(b.scratch);
  A* part_b = part_a + splits * s.C;
  A* k1 = part_b + splits * s.C;
  A* k0 = k1 + s.C;
  A* k2 = k0 + s.C;
  const A* mean = static_cast<const A*>(b.mean);
  const bool sums = b.grad_weight != nullptr || b.grad_bias != nullptr || (train && b.grad_input != nullptr);
  if (sums) launch_channel_sums<T, true>(s, x, dy, Centers<A>{mean, nullptr}, part_a, part_b, GradTerms{}, stream);
  BackwardFinalizeArgs<A> f{part_a,
                            part_b,
                            static_cast<const A*>(b.weight),
                            static_cast<const A*>(b.invstd),
                            static_cast<A*>(b.grad_weight),
                            static_cast<A*>(b.grad_bias),
                            k1,
                            k0,
                            k2,
                            s.C,
                            splits,
                            s.N * s.S,
                            sums,
                            train};
  backward_finalize_kernel<A><<<finalize_grid(s.C), finalize_block(), 0, stream>>>(f);
  ANATOMY_CUDA_LAUNCH_CHECK();
  if (b.grad_input != nullptr) {
    const Coefficients<A> k{mean, k1, k0, k2};
    launch_apply<T, true>(s, x, dy, static_cast<T*>(b.grad_input), k, stream);
  }
}

}  // namespace
}  // namespace channel_norm

void launch_batch_norm_backward(DType dtype, const ChannelShape& shape, const BatchNormBackwardBuffers& b, bool train,
                                cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (elementwise::is_floating_v<T>) {
      channel_norm::backward_for<T>(shape, b, train, stream);
      return true;
    }
    return false;
  });
  if (!launched) detail::throw_cuda_error(cudaErrorInvalidValue, "launch_batch_norm_backward", __FILE__, __LINE__);
}

}  // namespace anatomy::cuda
