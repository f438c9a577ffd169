// CUDA kernels of sum, mean and prod: dispatch/ops/reduce_functors.h's functors (fp16/bf16/fp32
// accumulate in fp32, fp64 in fp64, integers and bool in int64 with two's-complement
// wrap-around; mean divides once, an empty mean is NaN) on the device. Sum and mean read 16-byte
// vectors when the geometry asks for them (Note [CUDA reduction paths]).
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/reduce/reduce.cuh"

namespace anatomy::cuda {

void launch_reduce_sum(SumReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b,
                       cudaStream_t stream) {
  using namespace reduction;
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = static_cast<T*>(b.values);
    if (op == SumReduceOp::Prod) {
      launch_reduce<T>(g, b.input, b.scratch, Store<ProdFn<T>, T>{{}, out}, stream);
    } else {
      const double n = static_cast<double>(g.reduced);
      launch_reduce<T>(g, b.input, b.scratch, Store<SumFn<T>, T>{{op == SumReduceOp::Mean ? n : 1.0}, out}, stream);
    }
    return true;
  });
  if (!launched) reduce_dtype_error("launch_reduce_sum: unknown dtype");
}

}  // namespace anatomy::cuda
