// CPU: max, min, amax, amin (values; NaN wins), argmax, argmin, max.dim and min.dim (values and
// the index of the first extreme element; a NaN counts as the extreme, the first NaN wins):
// dispatch/ops/reduce_functors.h's functors through the CPU engine.
#include "anatomy/backends/cpu/reduce_cpu.h"
#include "anatomy/backends/cpu/reduce_loops.h"

namespace anatomy::cpu {

void extreme_loop(ReduceKind kind, const Reduction& r) {
  using namespace reduction;
  const Tensor in = dense_reduction_input(r.plan, r.input);
  const bool is_max = kind == ReduceKind::Max || kind == ReduceKind::ArgMax;
  const bool arg = kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin;
  visit_dtype(in.dtype(), r.plan.op(), [&]<typename T>() {
    if (arg || r.indices.defined()) {
      T* values = arg ? nullptr : static_cast<T*>(r.values.data_ptr());
      int64_t* indices = static_cast<int64_t*>(arg ? r.values.data_ptr() : r.indices.data_ptr());
      if (is_max) reduce_kernel<T>(r.plan, in, StoreValueIndex<T, true>{{}, values, indices});
      else reduce_kernel<T>(r.plan, in, StoreValueIndex<T, false>{{}, values, indices});
    } else {
      T* out = static_cast<T*>(r.values.data_ptr());
      if (is_max) reduce_kernel<T>(r.plan, in, Store<ExtremeFn<T, true>, T>{{}, out});
      else reduce_kernel<T>(r.plan, in, Store<ExtremeFn<T, false>, T>{{}, out});
    }
  });
}

}  // namespace anatomy::cpu
