// CUDA kernels of where, lerp and clamp with both bounds: one per ternary row (core/op_lists.h)
// with the row's functor (dispatch/ops/ternary_functors.h, the CPU's too), four operands of the
// plan's common dtype (where's bool condition was cast to it by the plan).
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/dispatch/ops/ternary_functors.h"

namespace anatomy::cuda {

void launch_ternary(TernaryOp op, DType dtype, const ElementwiseArgs<3>& args, cudaStream_t stream) {
  launch_for_dtype(dtype, "launch_ternary: the op and the dtype do not go together", [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (op) {
#define ANATOMY_CUDA_TERNARY_CASE(e, name, dtypes, Fn)                 \
  case TernaryOp::e:                                                   \
    if constexpr (binary_takes_v<BinaryDtypes::dtypes, T>) {           \
      launch_elementwise<3, T, T>(args, elementwise::Fn<T>{}, stream); \
      return true;                                                     \
    }                                                                  \
    return false;
      ANATOMY_FORALL_TERNARY_OPS(ANATOMY_CUDA_TERNARY_CASE)
#undef ANATOMY_CUDA_TERNARY_CASE
    }
    return false;
  });
}

}  // namespace anatomy::cuda
