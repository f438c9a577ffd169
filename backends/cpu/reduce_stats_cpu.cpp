// CPU: var and std, norm and logsumexp: dispatch/ops/reduce_functors.h's functors (Welford and
// Chan in fp64; |x|^p sums or the max / min / count of |x|; a running max with a rescaled sum)
// through the CPU engine.
#include "anatomy/backends/cpu/reduce_cpu.h"
#include "anatomy/backends/cpu/reduce_loops.h"

namespace anatomy::cpu {
namespace {

using namespace reduction;

template <typename T>
void norm_loop(const Reduction& r, const Tensor& in, double p) {
  T* out = static_cast<T*>(r.values.data_ptr());
  const float_acc_t<T> pa = static_cast<float_acc_t<T>>(p);
  visit_norm_kind(p, [&]<NormKind K>() { reduce_kernel<T>(r.plan, in, Store<NormFn<T, K>, T>{{pa}, out}); });
}

}  // namespace

void stats_loop(ReduceKind kind, const Reduction& r, const dispatch::ReduceArgs& args) {
  const Tensor in = dense_reduction_input(r.plan, r.input);
  visit_dtype(in.dtype(), r.plan.op(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T> || is_reduced_float_v<T>) {
      T* out = static_cast<T*>(r.values.data_ptr());
      switch (kind) {
        case ReduceKind::Var:
        case ReduceKind::Std:
          reduce_kernel<T>(r.plan, in, Store<VarFn<T>, T>{{args.correction, kind == ReduceKind::Std}, out});
          break;
        case ReduceKind::Norm:
          norm_loop<T>(r, in, args.p);
          break;
        case ReduceKind::LogSumExp:
          reduce_kernel<T>(r.plan, in, Store<LogSumExpFn<T>, T>{{}, out});
          break;
        default:
          break;
      }
    } else {
      ANATOMY_THROW(TypeError, "{}: expected a floating point input, got {}", r.plan.op(), name(in.dtype()));
    }
  });
}

}  // namespace anatomy::cpu
