// CPU: the element-wise binary operators over the iteration plan, one loop per row of
// dispatch/ops/binary_rows.h with the row's functor (dispatch/ops/binary_functors.h, shared with
// the CUDA kernels). Each chunk of the plan is a plain loop the compiler vectorizes when the
// operands are contiguous.
#include <type_traits>

#include "anatomy/backends/cpu/streaming_store.h"
#include "anatomy/core/call_path.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/binary_functors.h"
#include "anatomy/dispatch/ops/binary_registration.h"

namespace anatomy::cpu {

void ternary_kernel(TernaryOp op, const IterationPlan& plan);  // binary_ternary_cpu.cpp

namespace {

using elementwise::opmath_t;

// out[i] = f(a[i], b[i]): Out is the output's element type (bool for comparisons), T the inputs'.
template <typename Out, typename T, typename F>
void run_binary(const IterationPlan& plan, F f) {
  // Large contiguous outputs are written with streaming stores (Note [Streaming stores for large
  // outputs]).
  const bool stream = stream_output(plan.output(), static_cast<size_t>(plan.numel()) * sizeof(Out));
  plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
    constexpr int64_t kOut = sizeof(Out), kIn = sizeof(T);
    if (s[0] == kOut && s[1] == kIn && s[2] == kIn) {
      const T* a = reinterpret_cast<const T*>(data[1]);
      const T* b = reinterpret_cast<const T*>(data[2]);
      write_output(reinterpret_cast<Out*>(data[0]), n, stream, [&](Out* out, int64_t begin, int64_t count) {
        for (int64_t i = 0; i < count; ++i) out[i] = f(a[begin + i], b[begin + i]);
      });
    } else if (s[0] == kOut && s[1] == kIn && s[2] == 0) {  // tensor op scalar
      const T* a = reinterpret_cast<const T*>(data[1]);
      const T b = *reinterpret_cast<const T*>(data[2]);
      write_output(reinterpret_cast<Out*>(data[0]), n, stream, [&](Out* out, int64_t begin, int64_t count) {
        for (int64_t i = 0; i < count; ++i) out[i] = f(a[begin + i], b);
      });
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(data[0] + i * s[0]) =
            f(*reinterpret_cast<const T*>(data[1] + i * s[1]), *reinterpret_cast<const T*>(data[2] + i * s[2]));
      }
    }
  });
}

void binary_kernel(BinaryOp op, const IterationPlan& plan, const Scalar& alpha) {
  ANATOMY_CALL_PATH_STEP();
  check_binary_values(op, plan);  // before anything is written
  visit_dtype(plan.common_dtype(), binary_op_name(op), [&]<typename T>() {
    const opmath_t<T> w = alpha.to<opmath_t<T>>();
    switch (op) {
      // One case per row of dispatch/ops/binary_rows.h, for the dtypes the row takes (the plan
      // refused the others).
#define ANATOMY_CPU_BINARY_CASE(e, name, dtypes, Fn, group, ...)  \
  case BinaryOp::e:                                               \
    if constexpr (binary_takes_v<BinaryDtypes::dtypes, T>) {      \
      using F = elementwise::Fn<T>;                               \
      run_binary<std::invoke_result_t<F, T, T>, T>(plan, F{{w}}); \
    }                                                             \
    break;
      ANATOMY_FORALL_BINARY_OPS(ANATOMY_CPU_BINARY_CASE)
#undef ANATOMY_CPU_BINARY_CASE
    }
  });
  plan.finish();
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { dispatch::register_binary_kernels<&binary_kernel, &ternary_kernel>(m); }

}  // namespace anatomy::cpu
