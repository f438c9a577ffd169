// CPU: add, sub, mul and div (functional, in-place and out=) over the iteration plan. fp16 and
// bf16 compute in float and round once; each chunk of the plan is a plain loop the compiler
// vectorizes when the operands are contiguous.
#include <type_traits>

#include "anatomy/core/binary_ops.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/library.h"

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

template <BinaryOp Op>
Tensor binary_cpu(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  IterationPlan plan = plan_binary(Op, Tensor(), self, other, alpha);
  binary_kernel(Op, plan, alpha);
  return plan.result();
}
template <BinaryOp Op>
Tensor binary_cpu_noalpha(const Tensor& self, const Tensor& other) {
  return binary_cpu<Op>(self, other, 1);
}
template <BinaryOp Op>
Tensor binary_inplace_cpu(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  IterationPlan plan = plan_binary(Op, self, self, other, alpha);
  binary_kernel(Op, plan, alpha);
  self.impl()->bump_version();
  return self;
}
template <BinaryOp Op>
Tensor binary_inplace_cpu_noalpha(const Tensor& self, const Tensor& other) {
  return binary_inplace_cpu<Op>(self, other, 1);
}
template <BinaryOp Op>
Tensor binary_out_cpu(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  IterationPlan plan = plan_binary(Op, out, self, other, alpha);
  binary_kernel(Op, plan, alpha);
  out.impl()->bump_version();
  return out;
}
template <BinaryOp Op>
Tensor binary_out_cpu_noalpha(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out_cpu<Op>(self, other, 1, out);
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("add.Tensor", ANATOMY_KERNEL(binary_cpu<BinaryOp::Add>));
  m.impl("sub.Tensor", ANATOMY_KERNEL(binary_cpu<BinaryOp::Sub>));
  m.impl("mul.Tensor", ANATOMY_KERNEL(binary_cpu_noalpha<BinaryOp::Mul>));
  m.impl("div.Tensor", ANATOMY_KERNEL(binary_cpu_noalpha<BinaryOp::Div>));
  m.impl("add_.Tensor", ANATOMY_KERNEL(binary_inplace_cpu<BinaryOp::Add>));
  m.impl("sub_.Tensor", ANATOMY_KERNEL(binary_inplace_cpu<BinaryOp::Sub>));
  m.impl("mul_.Tensor", ANATOMY_KERNEL(binary_inplace_cpu_noalpha<BinaryOp::Mul>));
  m.impl("div_.Tensor", ANATOMY_KERNEL(binary_inplace_cpu_noalpha<BinaryOp::Div>));
  m.impl("add.out", ANATOMY_KERNEL(binary_out_cpu<BinaryOp::Add>));
  m.impl("sub.out", ANATOMY_KERNEL(binary_out_cpu<BinaryOp::Sub>));
  m.impl("mul.out", ANATOMY_KERNEL(binary_out_cpu_noalpha<BinaryOp::Mul>));
  m.impl("div.out", ANATOMY_KERNEL(binary_out_cpu_noalpha<BinaryOp::Div>));
}

}  // namespace anatomy::cpu
