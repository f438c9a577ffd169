// CPU: any and all (bool results; an element is true when nonzero, NaN included) and
// count_nonzero (int64).
#include "anatomy/backends/cpu/reduce_cpu.h"
#include "anatomy/backends/cpu/reduce_loops.h"

namespace anatomy::cpu {
namespace {

template <typename T, bool IsAny>
struct AnyAllOp {
  using acc_t = bool;
  bool* out;
  acc_t identity() const { return !IsAny; }
  acc_t step(acc_t a, T x, int64_t) const { return IsAny ? (a || convert<bool>(x)) : (a && convert<bool>(x)); }
  acc_t combine(acc_t a, acc_t b) const { return IsAny ? (a || b) : (a && b); }
  void write(int64_t o, acc_t a) const { out[o] = a; }
};

template <typename T>
struct CountOp {
  using acc_t = int64_t;
  int64_t* out;
  acc_t identity() const { return 0; }
  acc_t step(acc_t a, T x, int64_t) const { return a + (convert<bool>(x) ? 1 : 0); }
  acc_t combine(acc_t a, acc_t b) const { return a + b; }
  void write(int64_t o, acc_t a) const { out[o] = a; }
};

}  // namespace

void logical_loop(ReduceKind kind, const Reduction& r) {
  const Tensor in = dense_reduction_input(r.plan, r.input);
  visit_dtype(in.dtype(), r.plan.op(), [&]<typename T>() {
    if (kind == ReduceKind::CountNonzero) {
      reduce_kernel<T>(r.plan, in, CountOp<T>{static_cast<int64_t*>(r.values.data_ptr())});
    } else if (kind == ReduceKind::Any) {
      reduce_kernel<T>(r.plan, in, AnyAllOp<T, true>{static_cast<bool*>(r.values.data_ptr())});
    } else {
      reduce_kernel<T>(r.plan, in, AnyAllOp<T, false>{static_cast<bool*>(r.values.data_ptr())});
    }
  });
}

}  // namespace anatomy::cpu
