// CUDA: every reduction operator (sum, mean, prod, max, min, amax, amin, argmax, argmin, var,
// std, norm, logsumexp, any, all, count_nonzero) through dispatch/ops/reduce_registration.h, which
// does the checks, result dtypes and allocation for every backend. This file's one loop presents
// the input as the plan's dense [P, N, M] block (a device copy when it is not one already),
// chooses the launch geometry (Note [CUDA reduction paths], launch.h), takes the scratch of a
// two-pass reduction from the caching allocator, and calls the family's launcher.
#include "anatomy/backends/cuda/reduce/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/runtime/device_limits.h"
#include "anatomy/dispatch/ops/reduce_registration.h"

namespace anatomy::cuda {
namespace {

void reduce_cuda(ReduceKind kind, const Reduction& r, const dispatch::ReduceArgs& args) {
  const ReductionPlan& plan = r.plan;
  if (plan.num_outputs() == 0) return;
  DeviceGuard guard(r.values.device());
  const Tensor in = dense_reduction_input(plan, r.input);
  // Sum and mean read 16-byte vectors where the input's alignment and shape allow.
  const int vec = static_cast<int>(16 / element_size(in.dtype()));
  const bool vector_loads = (kind == ReduceKind::Sum || kind == ReduceKind::Mean) &&
                            vector_loads_allowed(in.data_ptr(), plan.outer(), plan.reduced(), plan.inner(), vec);
  const ReduceGeometry g = reduce_geometry(plan.outer(), plan.reduced(), plan.inner(),
                                           current_device_limits().multiprocessors, vector_loads ? vec : 1);
  // The partials of a two-pass reduction. Freed when this function returns: the caching
  // allocator hands the block out again only to work queued after these kernels on this stream.
  Tensor scratch;
  if (g.scratch_slots() > 0) {
    scratch = empty({g.scratch_slots() * static_cast<int64_t>(kMaxAccBytes)},
                    TensorOptions().dtype(DType::UInt8).device(r.values.device()));
  }
  ReduceBuffers b;
  b.input = in.data_ptr();
  b.scratch = scratch.defined() ? scratch.data_ptr() : nullptr;
  const bool arg = kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin;
  b.values = arg ? nullptr : r.values.data_ptr();
  b.indices = arg ? r.values.data_ptr() : r.indices.defined() ? r.indices.data_ptr() : nullptr;
  const DType t = in.dtype();
  const cudaStream_t stream = current_stream();
  switch (kind) {
    case ReduceKind::Sum:
      launch_reduce_sum(SumReduceOp::Sum, t, g, b, stream);
      break;
    case ReduceKind::Mean:
      launch_reduce_sum(SumReduceOp::Mean, t, g, b, stream);
      break;
    case ReduceKind::Prod:
      launch_reduce_sum(SumReduceOp::Prod, t, g, b, stream);
      break;
    case ReduceKind::Max:
    case ReduceKind::ArgMax:
      launch_reduce_extreme(ExtremeReduceOp::Max, t, g, b, stream);
      break;
    case ReduceKind::Min:
    case ReduceKind::ArgMin:
      launch_reduce_extreme(ExtremeReduceOp::Min, t, g, b, stream);
      break;
    case ReduceKind::Var:
      launch_reduce_stats(StatsReduceOp::Var, t, g, b, args.correction, stream);
      break;
    case ReduceKind::Std:
      launch_reduce_stats(StatsReduceOp::Std, t, g, b, args.correction, stream);
      break;
    case ReduceKind::Norm:
      launch_reduce_stats(StatsReduceOp::Norm, t, g, b, args.p, stream);
      break;
    case ReduceKind::LogSumExp:
      launch_reduce_stats(StatsReduceOp::LogSumExp, t, g, b, 0, stream);
      break;
    case ReduceKind::Any:
      launch_reduce_logical(LogicalReduceOp::Any, t, g, b, stream);
      break;
    case ReduceKind::All:
      launch_reduce_logical(LogicalReduceOp::All, t, g, b, stream);
      break;
    case ReduceKind::CountNonzero:
      launch_reduce_logical(LogicalReduceOp::CountNonzero, t, g, b, stream);
      break;
  }
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { dispatch::register_reduce_kernels<&reduce_cuda>(m); }

}  // namespace anatomy::cuda
