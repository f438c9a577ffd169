// CUDA: every element-wise operator, unary, binary (threshold_backward included) and ternary
// (where, lerp, clamp), functional, in-place and out=, over the same iteration plans as the CPU
// (dispatch/ops/{unary,binary}_registration.h). This file is the host side of the room's
// element-wise kernels: it checks what the host can see, turns the plan into the kernel's
// by-value arguments and calls the launcher of the op's group (its row in
// dispatch/ops/{unary,binary}_rows.h).
#include <cstring>
#include <limits>

#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/call_path.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/binary_registration.h"
#include "anatomy/dispatch/ops/unary_registration.h"

namespace anatomy::cuda {
namespace {

// The ElementwiseArgs of an iteration plan (core/iteration_plan.h). The plan has already
// broadcast, promoted, allocated and checked; this copies its loop shape and byte strides into
// the kernel's by-value parameter block, and the value of each CPU scalar input (Note [CPU
// scalars in device plans]) in place of its pointer.
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

// The CPU raises for an integer zero divisor and for an integer raised to a negative power. A
// divisor or exponent in device memory cannot be looked at without waiting for the device, so
// those give values (Note [Integer division by zero on CUDA], dispatch/ops/binary_functors.h); a CPU
// scalar's value is right here, so it raises exactly as on the CPU.
void check_cpu_scalar_operand(BinaryOp op, const IterationPlan& plan) {
  const DType t = plan.common_dtype();
  const bool divides = binary_op_divides(op);
  if (is_floating(t) || t == DType::Bool || (!divides && op != BinaryOp::Pow) || !plan.is_cpu_scalar(1)) return;
  const int64_t v = visit_dtype(t, binary_op_name(op), [&]<typename T>() -> int64_t {
    return static_cast<int64_t>(*static_cast<const T*>(plan.input(1).data_ptr()));
  });
  if (divides) ANATOMY_CHECK(v != 0, ValueError, "{}: integer division by zero", binary_op_name(op));
  else ANATOMY_CHECK(v >= 0, ValueError, "pow: Integers to negative integer powers are not allowed");
}

void binary_cuda(BinaryOp op, const IterationPlan& plan, const Scalar& alpha) {
  ANATOMY_CALL_PATH_STEP();
  check_cpu_scalar_operand(op, plan);  // before anything is written
  DeviceGuard guard(plan.output(0).device());
  const DType t = plan.common_dtype();
  const char* name = binary_op_name(op);
  const ElementwiseArgs<2> args = make_elementwise_args<2>(plan, name);
  const cudaStream_t stream = current_stream();
  const double alpha_float = is_floating(t) ? alpha.to<double>() : 0.0;
  const int64_t alpha_int = is_floating(t) ? 0 : alpha.to<int64_t>();
  switch (op) {
#define ANATOMY_CUDA_BINARY_GROUP(e, name, dtypes, fn, group, ...)                        \
  case BinaryOp::e:                                                                       \
    launch_binary_group<BinaryGroup::group>(op, t, args, alpha_float, alpha_int, stream); \
    break;
    ANATOMY_FORALL_BINARY_OPS(ANATOMY_CUDA_BINARY_GROUP)
#undef ANATOMY_CUDA_BINARY_GROUP
  }
  plan.finish();  // an out= tensor of another dtype: the cast kernel (copy_cuda.cpp)
}

void ternary_cuda(TernaryOp op, const IterationPlan& plan) {
  DeviceGuard guard(plan.output(0).device());
  launch_ternary(op, plan.common_dtype(), make_elementwise_args<3>(plan, ternary_op_name(op)), current_stream());
  plan.finish();
}

void unary_cuda(UnaryOp op, const IterationPlan& plan, const UnaryParams& params) {
  DeviceGuard guard(plan.output(0).device());
  const DType t = plan.common_dtype();
  const ElementwiseArgs<1> args = make_elementwise_args<1>(plan, unary_op_name(op));
  const UnaryScalars k = unary_scalars(op, t, params);
  const cudaStream_t stream = current_stream();
  switch (op) {
#define ANATOMY_CUDA_UNARY_GROUP(e, name, kind, fn, group, ...)    \
  case UnaryOp::e:                                                 \
    launch_unary_group<UnaryGroup::group>(op, t, args, k, stream); \
    break;
    ANATOMY_FORALL_UNARY_OPS(ANATOMY_CUDA_UNARY_GROUP)
#undef ANATOMY_CUDA_UNARY_GROUP
  }
  plan.finish();  // an out= tensor of another dtype: the cast kernel (copy_cuda.cpp)
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  dispatch::register_unary_kernels<&unary_cuda>(m);
  dispatch::register_binary_kernels<&binary_cuda, &ternary_cuda>(m);
}

}  // namespace anatomy::cuda
