// CUDA: every element-wise unary operator (functional, in-place, out=) over the same iteration
// plans as the CPU (dispatch/ops/unary_registration.h); this file picks the launcher of the op's
// group (its row in dispatch/ops/unary_rows.h) and turns the plan and the op's arguments into
// its arguments.
#include "anatomy/backends/cuda/elementwise/elementwise_args.h"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/dispatch/ops/unary_registration.h"

namespace anatomy::cuda {
namespace {

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

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { dispatch::register_unary_kernels<&unary_cuda>(m); }

}  // namespace anatomy::cuda
