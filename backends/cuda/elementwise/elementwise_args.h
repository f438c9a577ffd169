// Host side: the ElementwiseArgs of an iteration plan (core/iteration_plan.h), for the CUDA
// element-wise kernels. The plan has already broadcast, promoted, allocated and checked; this
// copies its loop shape and byte strides into the kernel's by-value parameter block, and the
// value of each CPU scalar input (Note [CPU scalars in device plans]) in place of its pointer.
#pragma once

#include <cstring>
#include <limits>

#include "anatomy/backends/cuda/elementwise/elementwise_layout.h"
#include "anatomy/core/iteration_plan.h"

namespace anatomy::cuda {

template <int NIn>
ElementwiseArgs<NIn> make_elementwise_args(const IterationPlan& plan, const char* op) {
  ANATOMY_INTERNAL_ASSERT(plan.num_outputs() == 1 && plan.num_operands() == NIn + 1,
                          "make_elementwise_args: operand count does not match the kernel");
  ElementwiseArgs<NIn> args;
  args.output = plan.output(0).data_ptr();
  for (int k = 0; k < NIn; ++k) {
    const Tensor& in = plan.input(k);
    if (plan.is_cpu_scalar(k)) {
      // The plan cast it to the common dtype, the dtype every kernel's inputs have.
      ANATOMY_INTERNAL_ASSERT(
          in.numel() == 1 && in.element_size() <= sizeof(uint64_t) && in.dtype() == plan.common_dtype(),
          "{}: a CPU scalar input of {} elements and dtype {}", op, in.numel(), name(in.dtype()));
      args.is_scalar[k] = true;
      std::memcpy(&args.scalar_bits[k], in.data_ptr(), in.element_size());
    } else {
      args.inputs[k] = in.data_ptr();
    }
  }
  args.numel = plan.numel();
  const IntArrayRef shape = plan.loop_shape();
  // The plan calls a loop with a broadcast (stride 0) operand strided; for the kernels a CPU
  // scalar costs nothing to broadcast, so a 1-d loop over dense device operands stays flat.
  bool flat = plan.is_contiguous() || shape.size() == 1;
  for (int k = 0; k <= NIn && flat && !plan.is_contiguous(); ++k) {
    if (k > 0 && args.is_scalar[k - 1]) continue;
    const Tensor& t = k == 0 ? plan.output(0) : plan.input(k - 1);
    flat = plan.loop_stride(k, 0) == static_cast<int64_t>(t.element_size());
  }
  args.contiguous = flat;
  args.use_32bit = plan.can_use_32bit_indexing() && plan.numel() <= std::numeric_limits<int32_t>::max();
  if (!args.contiguous) {
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
