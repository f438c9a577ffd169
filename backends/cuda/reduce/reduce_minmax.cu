// CUDA kernels of max, min, amax, amin (values; a NaN wins), argmax, argmin, max.dim and min.dim
// (values and the index of the first extreme element; a NaN counts as the extreme, the first NaN
// wins): dispatch/ops/reduce_functors.h's functors on the device, for every dtype. fp16/bf16
// compare in fp32.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/reduce/reduce.cuh"

namespace anatomy::cuda {
namespace {

template <typename T, bool IsMax>
void launch_extreme(const ReduceGeometry& g, const ReduceBuffers& b, cudaStream_t stream) {
  using namespace reduction;
  T* values = static_cast<T*>(b.values);
  if (b.indices) {
    launch_reduce<T>(g, b.input, b.scratch, StoreValueIndex<T, IsMax>{{}, values, static_cast<int64_t*>(b.indices)},
                     stream);
  } else {
    launch_reduce<T>(g, b.input, b.scratch, Store<ExtremeFn<T, IsMax>, T>{{}, values}, stream);
  }
}

}  // namespace

void launch_reduce_extreme(ExtremeReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b,
                           cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (op == ExtremeReduceOp::Max) launch_extreme<T, true>(g, b, stream);
    else launch_extreme<T, false>(g, b, stream);
    return true;
  });
  if (!launched) reduce_dtype_error("launch_reduce_extreme: unknown dtype");
}

}  // namespace anatomy::cuda
