// CPU: sum, mean and prod through the cascade engine (Note [Cascade summation]); the arithmetic
// is dispatch/ops/reduce_functors.h's (integers wrap in int64, mean divides once).
#include "anatomy/backends/cpu/reduce_cpu.h"
#include "anatomy/backends/cpu/reduce_loops.h"

namespace anatomy::cpu {

void sum_prod_loop(ReduceKind kind, const Reduction& r) {
  using namespace reduction;
  const Tensor in = dense_reduction_input(r.plan, r.input);
  visit_dtype(in.dtype(), r.plan.op(), [&]<typename T>() {
    T* out = static_cast<T*>(r.values.data_ptr());
    if (kind == ReduceKind::Prod) {
      reduce_kernel<T>(r.plan, in, Store<ProdFn<T>, T>{{}, out});
    } else {
      const double n = static_cast<double>(r.plan.reduced());
      reduce_kernel<T>(r.plan, in, Store<SumFn<T>, T>{{kind == ReduceKind::Mean ? n : 1.0}, out});
    }
  });
}

}  // namespace anatomy::cpu
