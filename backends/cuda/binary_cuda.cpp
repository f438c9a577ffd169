// CUDA: add, sub, mul and div (functional, in-place, out=) over the same iteration plan as the
// CPU (dispatch/binary_registration.h); this file only turns the plan into kernel arguments.
#include "anatomy/backends/cuda/binary.h"
#include "anatomy/backends/cuda/current_stream.h"
#include "anatomy/backends/cuda/device.h"
#include "anatomy/backends/cuda/elementwise_args.h"
#include "anatomy/dispatch/binary_registration.h"

namespace anatomy::cuda {
namespace {

void binary_cuda(BinaryOp op, const IterationPlan& plan, const Scalar& alpha) {
  ArithmeticOp code;
  switch (op) {
    case BinaryOp::Add: code = ArithmeticOp::Add; break;
    case BinaryOp::Sub: code = ArithmeticOp::Sub; break;
    case BinaryOp::Mul: code = ArithmeticOp::Mul; break;
    case BinaryOp::Div: code = ArithmeticOp::Div; break;
    default:
      ANATOMY_THROW(NotImplementedError, "{}: no CUDA kernel yet", binary_op_name(op));
  }
  DeviceGuard guard(plan.output(0).device());
  const double alpha_float = is_floating(plan.common_dtype()) ? alpha.to<double>() : 0.0;
  const int64_t alpha_int = is_floating(plan.common_dtype()) ? 0 : alpha.to<int64_t>();
  launch_arithmetic(code, plan.common_dtype(), make_elementwise_args<2>(plan, binary_op_name(op)), alpha_float,
                    alpha_int, current_stream());
  plan.finish();
}

// where, lerp and clamp with tensor bounds: no CUDA kernels yet.
void ternary_cuda(TernaryOp op, const IterationPlan&) {
  ANATOMY_THROW(NotImplementedError, "{}: no CUDA kernel yet", ternary_op_name(op));
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { dispatch::register_binary_kernels<&binary_cuda, &ternary_cuda>(m); }

}  // namespace anatomy::cuda
