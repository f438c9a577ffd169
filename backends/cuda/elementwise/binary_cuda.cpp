// CUDA: every element-wise binary operator (threshold_backward included) and where, lerp and
// clamp (functional, in-place, out=) over the same iteration plans as the CPU
// (dispatch/ops/binary_registration.h); this file checks what the host can see, picks the
// launcher of the op's group (its row in dispatch/ops/binary_rows.h) and turns the plan into its
// arguments.
#include "anatomy/backends/cuda/elementwise/elementwise_args.h"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/binary_registration.h"

namespace anatomy::cuda {
namespace {

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

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { dispatch::register_binary_kernels<&binary_cuda, &ternary_cuda>(m); }

}  // namespace anatomy::cuda
