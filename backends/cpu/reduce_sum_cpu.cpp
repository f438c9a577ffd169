// CPU: sum, mean and prod through the cascade engine (Note [Cascade summation]). Integers
// accumulate in int64 with two's-complement wrap-around (computed unsigned: no UB on overflow).
#include "anatomy/backends/cpu/reduce_cpu.h"
#include "anatomy/backends/cpu/reduce_loops.h"

namespace anatomy::cpu {
namespace {

template <typename A>
A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return a + b;
}
template <typename A>
A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return a * b;
}

template <typename T>
struct SumOp {
  using acc_t = reduce_acc_t<T>;
  T* out;
  double divisor;  // 1, or N for mean
  acc_t identity() const { return acc_t(0); }
  acc_t step(acc_t a, T x, int64_t) const { return wrap_add(a, convert<acc_t>(x)); }
  acc_t combine(acc_t a, acc_t b) const { return wrap_add(a, b); }
  void write(int64_t o, acc_t a) const {
    if constexpr (std::is_integral_v<acc_t>) out[o] = convert<T>(a);
    else out[o] = convert<T>(divisor == 1 ? a : static_cast<acc_t>(a / static_cast<acc_t>(divisor)));
  }
};

template <typename T>
struct ProdOp {
  using acc_t = reduce_acc_t<T>;
  T* out;
  acc_t identity() const { return acc_t(1); }
  acc_t step(acc_t a, T x, int64_t) const { return wrap_mul(a, convert<acc_t>(x)); }
  acc_t combine(acc_t a, acc_t b) const { return wrap_mul(a, b); }
  void write(int64_t o, acc_t a) const { out[o] = convert<T>(a); }
};

}  // namespace

void sum_prod_loop(ReduceKind kind, const Reduction& r) {
  const Tensor in = dense_reduction_input(r.plan, r.input);
  visit_dtype(in.dtype(), r.plan.op(), [&]<typename T>() {
    T* out = static_cast<T*>(r.values.data_ptr());
    if (kind == ReduceKind::Prod) {
      reduce_kernel<T>(r.plan, in, ProdOp<T>{out});
    } else {
      // mean divides the sum once, in the accumulation type (0 / 0: an empty mean is NaN).
      const double n = static_cast<double>(r.plan.reduced());
      reduce_kernel<T>(r.plan, in, SumOp<T>{out, kind == ReduceKind::Mean ? n : 1.0});
    }
  });
}

}  // namespace anatomy::cpu
