// CPU: add, sub, mul and div (functional, in-place and out=) over the iteration plan. fp16 and
// bf16 compute in float and round once; each chunk of the plan is a plain loop the compiler
// vectorizes when the operands are contiguous.
#include <type_traits>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/binary_registration.h"

namespace anatomy::cpu {
namespace {

// The type arithmetic happens in: float for the 2-byte floats, the type itself otherwise.
template <typename T>
using opmath_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

template <typename T, typename F>
void run_binary(const IterationPlan& plan, F f) {
  plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
    constexpr int64_t kSize = sizeof(T);
    if (s[0] == kSize && s[1] == kSize && s[2] == kSize) {
      T* out = reinterpret_cast<T*>(data[0]);
      const T* a = reinterpret_cast<const T*>(data[1]);
      const T* b = reinterpret_cast<const T*>(data[2]);
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
    } else if (s[0] == kSize && s[1] == kSize && s[2] == 0) {  // tensor op scalar
      T* out = reinterpret_cast<T*>(data[0]);
      const T* a = reinterpret_cast<const T*>(data[1]);
      const T b = *reinterpret_cast<const T*>(data[2]);
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<T*>(data[0] + i * s[0]) =
            f(*reinterpret_cast<const T*>(data[1] + i * s[1]), *reinterpret_cast<const T*>(data[2] + i * s[2]));
      }
    }
  });
}

void binary_kernel(BinaryOp op, const IterationPlan& plan, const Scalar& alpha) {
  visit_dtype(plan.common_dtype(), binary_op_name(op), [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      // bool arithmetic is logical: + is or (alpha is true), * is and; sub is refused earlier.
      if (op == BinaryOp::Add) run_binary<T>(plan, [](bool a, bool b) { return a || b; });
      else if (op == BinaryOp::Mul) run_binary<T>(plan, [](bool a, bool b) { return a && b; });
    } else {
      const M w = alpha.to<M>();
      switch (op) {
        case BinaryOp::Add:
          run_binary<T>(plan, [w](T a, T b) { return static_cast<T>(M(a) + w * M(b)); });
          break;
        case BinaryOp::Sub:
          run_binary<T>(plan, [w](T a, T b) { return static_cast<T>(M(a) - w * M(b)); });
          break;
        case BinaryOp::Mul:
          run_binary<T>(plan, [](T a, T b) { return static_cast<T>(M(a) * M(b)); });
          break;
        case BinaryOp::Div:
          // The plan promotes integers to float, so this is always a floating division.
          if constexpr (!std::is_integral_v<T>) run_binary<T>(plan, [](T a, T b) { return static_cast<T>(M(a) / M(b)); });
          break;
      }
    }
  });
  plan.finish();
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { dispatch::register_binary_kernels<&binary_kernel>(m); }

}  // namespace anatomy::cpu
