// Internal to elementwise/: included by the room's own files only (its launcher header is
// launch.h).
// The CUDA kernels of one group of the binary rows (dispatch/ops/binary_rows.h): for the op and
// the dtype, the row's functor (dispatch/ops/binary_functors.h, the CPU's too) through
// launch_elementwise. Each binary_<group>.cu instantiates only its group's rows, so the four
// files share the compile time.
#pragma once

#include <type_traits>

#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/core/call_path.h"
#include "anatomy/dispatch/ops/binary_functors.h"

namespace anatomy::cuda {

template <BinaryGroup G>
void launch_binary_group(BinaryOp op, DType dtype, const ElementwiseArgs<2>& args, double alpha_float,
                         int64_t alpha_int, cudaStream_t stream) {
  ANATOMY_CALL_PATH_STEP();
  // elementwise_cuda.cpp calls the row's group, and the plan refused the dtypes the row does not take.
  launch_for_dtype(dtype, "launch_binary: the op, its group and the dtype do not go together", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = elementwise::opmath_t<T>;
    const M alpha = elementwise::is_floating_v<T> ? static_cast<M>(alpha_float) : static_cast<M>(alpha_int);
    switch (op) {
#define ANATOMY_CUDA_BINARY_CASE(e, name, dtypes, Fn, group, ...)                        \
  case BinaryOp::e:                                                                      \
    if constexpr (BinaryGroup::group == G && binary_takes_v<BinaryDtypes::dtypes, T>) {  \
      using F = elementwise::Fn<T>;                                                      \
      launch_elementwise<2, std::invoke_result_t<F, T, T>, T>(args, F{{alpha}}, stream); \
      return true;                                                                       \
    }                                                                                    \
    return false;
      ANATOMY_FORALL_BINARY_OPS(ANATOMY_CUDA_BINARY_CASE)
#undef ANATOMY_CUDA_BINARY_CASE
    }
    return false;
  });
}

}  // namespace anatomy::cuda
