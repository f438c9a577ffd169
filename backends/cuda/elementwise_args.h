// Host side: the ElementwiseArgs of an iteration plan (core/iteration_plan.h), for the CUDA
// element-wise kernels. The plan has already broadcast, promoted, allocated and checked; this
// copies its loop shape and byte strides into the kernel's by-value parameter block.
#pragma once

#include <limits>

#include "anatomy/backends/cuda/elementwise_layout.h"
#include "anatomy/core/iteration_plan.h"

namespace anatomy::cuda {

template <int NIn>
ElementwiseArgs<NIn> make_elementwise_args(const IterationPlan& plan, const char* op) {
  ANATOMY_INTERNAL_ASSERT(plan.num_outputs() == 1 && plan.num_operands() == NIn + 1,
                          "make_elementwise_args: operand count does not match the kernel");
  ElementwiseArgs<NIn> args;
  args.output = plan.output(0).data_ptr();
  for (int k = 0; k < NIn; ++k) args.inputs[k] = plan.input(k).data_ptr();
  args.numel = plan.numel();
  args.contiguous = plan.is_contiguous();
  args.use_32bit = plan.can_use_32bit_indexing() && plan.numel() <= std::numeric_limits<int32_t>::max();
  if (!args.contiguous) {
    const IntArrayRef shape = plan.loop_shape();
    ANATOMY_CHECK(shape.size() <= static_cast<size_t>(kMaxDims), NotImplementedError,
                  "{}: the CUDA kernels take at most {} dims after merging, got {}", op, kMaxDims, shape.size());
    args.layout.ndim = static_cast<int>(shape.size());
    for (int d = 0; d < args.layout.ndim; ++d) {
      args.layout.sizes[d] = shape[d];
      for (int k = 0; k <= NIn; ++k) args.layout.byte_strides[k][d] = plan.loop_stride(k, d);
    }
  }
  return args;
}

}  // namespace anatomy::cuda
