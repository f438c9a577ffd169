// CPU: where, lerp and clamp (both bounds) over a ternary iteration plan: one loop per row with
// the row's functor (dispatch/ops/ternary_functors.h, shared with the CUDA kernels), all four
// operands of the plan's common dtype (where's condition was cast to it by the plan).
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/ternary_functors.h"
#include "anatomy/dispatch/ops/ternary_rules.h"

namespace anatomy::cpu {
namespace {

// out[i] = f(a[i], b[i], c[i]); a fast path when everything is contiguous.
template <typename T, typename F>
void run_ternary(const IterationPlan& plan, F f) {
  plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
    constexpr int64_t k = sizeof(T);
    if (s[0] == k && s[1] == k && s[2] == k && s[3] == k) {
      T* out = reinterpret_cast<T*>(data[0]);
      const T* a = reinterpret_cast<const T*>(data[1]);
      const T* b = reinterpret_cast<const T*>(data[2]);
      const T* c = reinterpret_cast<const T*>(data[3]);
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i], c[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<T*>(data[0] + i * s[0]) =
            f(*reinterpret_cast<const T*>(data[1] + i * s[1]), *reinterpret_cast<const T*>(data[2] + i * s[2]),
              *reinterpret_cast<const T*>(data[3] + i * s[3]));
      }
    }
  });
}

}  // namespace

void ternary_kernel(TernaryOp op, const IterationPlan& plan) {
  visit_dtype(plan.common_dtype(), ternary_op_name(op), [&]<typename T>() {
    switch (op) {
      // One case per ternary row (core/op_lists.h), for the dtypes the row takes (the plan
      // refused the others).
#define ANATOMY_CPU_TERNARY_CASE(e, name, dtypes, Fn)                                                  \
  case TernaryOp::e:                                                                                   \
    if constexpr (binary_takes_v<BinaryDtypes::dtypes, T>) run_ternary<T>(plan, elementwise::Fn<T>{}); \
    break;
      ANATOMY_FORALL_TERNARY_OPS(ANATOMY_CPU_TERNARY_CASE)
#undef ANATOMY_CPU_TERNARY_CASE
    }
  });
  plan.finish();
}

}  // namespace anatomy::cpu
