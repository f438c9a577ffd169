// CUDA kernels of var and std, norm and logsumexp: dispatch/ops/reduce_functors.h's functors
// (Welford and Chan in fp64; |x|^p sums in fp32, fp64 for fp64, or the max / min / count of |x|;
// a running max with a rescaled sum) on the device; floating dtypes only.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/reduce/reduce.cuh"

namespace anatomy::cuda {
namespace {

template <typename T>
void launch_norm(const ReduceGeometry& g, const ReduceBuffers& b, double p, cudaStream_t stream) {
  using namespace reduction;
  T* out = static_cast<T*>(b.values);
  const float_acc_t<T> pa = static_cast<float_acc_t<T>>(p);
  visit_norm_kind(p, [&]<NormKind K>() {
    launch_reduce<T>(g, b.input, b.scratch, Store<NormFn<T, K>, T>{{pa}, out}, stream);
  });
}

}  // namespace

void launch_reduce_stats(StatsReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b, double a,
                         cudaStream_t stream) {
  using namespace reduction;
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      T* out = static_cast<T*>(b.values);
      switch (op) {
        case StatsReduceOp::Var:
        case StatsReduceOp::Std:
          launch_reduce<T>(g, b.input, b.scratch, Store<VarFn<T>, T>{{a, op == StatsReduceOp::Std}, out}, stream);
          break;
        case StatsReduceOp::Norm:
          launch_norm<T>(g, b, a, stream);
          break;
        case StatsReduceOp::LogSumExp:
          launch_reduce<T>(g, b.input, b.scratch, Store<LogSumExpFn<T>, T>{{}, out}, stream);
          break;
      }
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_reduce_stats: not a floating dtype");
}

}  // namespace anatomy::cuda
