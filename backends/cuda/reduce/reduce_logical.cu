// CUDA kernels of any and all (bool results; an element is true when nonzero, NaN included) and
// count_nonzero (int64): dispatch/ops/reduce_functors.h's functors on the device, every dtype.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/reduce/reduce.cuh"

namespace anatomy::cuda {

void launch_reduce_logical(LogicalReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b,
                           cudaStream_t stream) {
  using namespace reduction;
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    bool* flags = static_cast<bool*>(b.values);
    switch (op) {
      case LogicalReduceOp::Any:
        launch_reduce<T>(g, b.input, b.scratch, Store<AnyAllFn<T, true>, bool>{{}, flags}, stream);
        break;
      case LogicalReduceOp::All:
        launch_reduce<T>(g, b.input, b.scratch, Store<AnyAllFn<T, false>, bool>{{}, flags}, stream);
        break;
      case LogicalReduceOp::CountNonzero:
        launch_reduce<T>(g, b.input, b.scratch, Store<CountNonzeroFn<T>, int64_t>{{}, static_cast<int64_t*>(b.values)},
                         stream);
        break;
    }
    return true;
  });
  if (!launched) reduce_dtype_error("launch_reduce_logical: unknown dtype");
}

}  // namespace anatomy::cuda
