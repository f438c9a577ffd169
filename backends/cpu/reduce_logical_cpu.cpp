// CPU: any and all (bool results; an element is true when nonzero, NaN included) and
// count_nonzero (int64), dispatch/ops/reduce_functors.h's functors through the CPU engine.
#include "anatomy/backends/cpu/reduce_cpu.h"
#include "anatomy/backends/cpu/reduce_loops.h"

namespace anatomy::cpu {

void logical_loop(ReduceKind kind, const Reduction& r) {
  using namespace reduction;
  const Tensor in = dense_reduction_input(r.plan, r.input);
  visit_dtype(in.dtype(), r.plan.op(), [&]<typename T>() {
    if (kind == ReduceKind::CountNonzero) {
      reduce_kernel<T>(r.plan, in, Store<CountNonzeroFn<T>, int64_t>{{}, static_cast<int64_t*>(r.values.data_ptr())});
    } else if (kind == ReduceKind::Any) {
      reduce_kernel<T>(r.plan, in, Store<AnyAllFn<T, true>, bool>{{}, static_cast<bool*>(r.values.data_ptr())});
    } else {
      reduce_kernel<T>(r.plan, in, Store<AnyAllFn<T, false>, bool>{{}, static_cast<bool*>(r.values.data_ptr())});
    }
  });
}

}  // namespace anatomy::cpu
