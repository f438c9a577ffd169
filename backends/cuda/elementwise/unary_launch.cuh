// Internal to elementwise/: included by the room's own files only (its launcher header is
// launch.h).
// The CUDA kernels of one group of the unary rows (dispatch/ops/unary_rows.h): for the op and the
// dtype, the row's functor (dispatch/ops/unary_functors.h, the CPU's too) through
// launch_elementwise. Each unary_<group>.cu instantiates only its group's rows, so the three
// files share the compile time.
#pragma once

#include <type_traits>

#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/dispatch/ops/unary_functors.h"

namespace anatomy::cuda {

template <UnaryGroup G>
void launch_unary_group(UnaryOp op, DType dtype, const ElementwiseArgs<1>& args, const UnaryScalars& k,
                        cudaStream_t stream) {
  // elementwise_cuda.cpp calls the row's group, and the plan refused the dtypes the row does not take.
  launch_for_dtype(dtype, "launch_unary: the op, its group and the dtype do not go together", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = elementwise::opmath_t<T>;
    switch (op) {
#define ANATOMY_CUDA_UNARY_CASE(e, name, kind, Fn, group, ...)                                         \
  case UnaryOp::e:                                                                                     \
    if constexpr (UnaryGroup::group == G && unary_takes_v<UnaryKind::kind, T>) {                       \
      using F = elementwise::Fn<T>;                                                                    \
      launch_elementwise<1, std::invoke_result_t<F, T>, T>(args, F{{M(k.a), M(k.b), M(k.c)}}, stream); \
      return true;                                                                                     \
    }                                                                                                  \
    return false;
      ANATOMY_FORALL_UNARY_OPS(ANATOMY_CUDA_UNARY_CASE)
#undef ANATOMY_CUDA_UNARY_CASE
    }
    return false;
  });
}

}  // namespace anatomy::cuda
