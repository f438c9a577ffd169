// CPU: the element-wise binary operators over the iteration plan. fp16 and bf16 compute in float
// and round once; each chunk of the plan is a plain loop the compiler vectorizes when the
// operands are contiguous. Integer rules never hit undefined behaviour (INT_MIN / -1 wraps,
// shifts are bounded, arithmetic wraps as in two's complement).
#include <cmath>
#include <limits>
#include <type_traits>

#include "anatomy/backends/cpu/streaming_store.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/binary_registration.h"

namespace anatomy::cpu {

void ternary_kernel(TernaryOp op, const IterationPlan& plan);  // binary_ternary_cpu.cpp

namespace {

// The type arithmetic happens in: float for the 2-byte floats, the type itself otherwise.
template <typename T>
using opmath_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

// out[i] = f(a[i], b[i]): Out is the output's element type (bool for comparisons), T the inputs'.
template <typename Out, typename T, typename F>
void run_binary(const IterationPlan& plan, F f) {
  // Large contiguous outputs are written with streaming stores (Note [Streaming stores for large
  // outputs]).
  const size_t out_bytes = static_cast<size_t>(plan.numel()) * sizeof(Out);
  plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
    constexpr int64_t kOut = sizeof(Out), kIn = sizeof(T);
    if (s[0] == kOut && s[1] == kIn && s[2] == kIn) {
      const T* a = reinterpret_cast<const T*>(data[1]);
      const T* b = reinterpret_cast<const T*>(data[2]);
      write_output(reinterpret_cast<Out*>(data[0]), n, out_bytes, [&](Out* out, int64_t begin, int64_t count) {
        for (int64_t i = 0; i < count; ++i) out[i] = f(a[begin + i], b[begin + i]);
      });
    } else if (s[0] == kOut && s[1] == kIn && s[2] == 0) {  // tensor op scalar
      const T* a = reinterpret_cast<const T*>(data[1]);
      const T b = *reinterpret_cast<const T*>(data[2]);
      write_output(reinterpret_cast<Out*>(data[0]), n, out_bytes, [&](Out* out, int64_t begin, int64_t count) {
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

// ---- integer rules (never undefined behaviour: INT_MIN / -1 wraps, shifts are bounded) ----
template <typename T>
T wrapping_neg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(0) - static_cast<U>(a));
}
template <typename T>
T int_div_trunc(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrapping_neg(a);
  }
  return static_cast<T>(a / b);
}
template <typename T>
T int_div_floor(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrapping_neg(a);
  }
  T q = static_cast<T>(a / b);
  const T r = static_cast<T>(a % b);
  if (r != 0 && ((r < 0) != (b < 0))) --q;
  return q;
}
template <typename T>
T int_fmod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}
template <typename T>
T int_remainder(T a, T b) {
  T r = int_fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
  return r;
}
// exponent >= 0 (checked before the loop); wraps like repeated multiplication in T.
template <typename T>
T int_pow(T base, T exponent) {
  using U = std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>;
  U result = 1, b = static_cast<U>(base);
  for (auto e = static_cast<std::make_unsigned_t<T>>(exponent); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}
// Shifts by a negative amount or by the width or more: left gives 0, right fills with the sign.
template <typename T>
T shift_left(T a, T b) {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  if (b < 0 || b >= kBits) return 0;
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) << b);
}
template <typename T>
T shift_right(T a, T b) {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  if (b < 0 || b >= kBits) return static_cast<T>(a >> (kBits - 1));
  return static_cast<T>(a >> b);
}

// ---- floating rules (PyTorch's) ----
template <typename M>
M float_div_floor(M a, M b) {
  if (b == 0) return a / b;
  const M mod = std::fmod(a, b);
  M div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(M(0), a / b);
  M floordiv = std::floor(div);
  if (div - floordiv > M(0.5)) floordiv += 1;
  return floordiv;
}
template <typename M>
M float_remainder(M a, M b) {
  M mod = std::fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}
template <typename M>
M nan_max(M a, M b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<M>::quiet_NaN();
  return a < b ? b : a;
}
template <typename M>
M nan_min(M a, M b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<M>::quiet_NaN();
  return b < a ? b : a;
}

// Comparisons and logical ops: bool out, T in.
template <typename T>
void compare_kernel(BinaryOp op, const IterationPlan& plan) {
  using M = opmath_t<T>;
  switch (op) {
    case BinaryOp::Eq: return run_binary<bool, T>(plan, [](T a, T b) { return M(a) == M(b); });
    case BinaryOp::Ne: return run_binary<bool, T>(plan, [](T a, T b) { return M(a) != M(b); });
    case BinaryOp::Lt: return run_binary<bool, T>(plan, [](T a, T b) { return M(a) < M(b); });
    case BinaryOp::Le: return run_binary<bool, T>(plan, [](T a, T b) { return M(a) <= M(b); });
    case BinaryOp::Gt: return run_binary<bool, T>(plan, [](T a, T b) { return M(a) > M(b); });
    case BinaryOp::Ge: return run_binary<bool, T>(plan, [](T a, T b) { return M(a) >= M(b); });
    case BinaryOp::LogicalAnd:
      return run_binary<bool, T>(plan, [](T a, T b) { return convert<bool>(a) && convert<bool>(b); });
    case BinaryOp::LogicalOr:
      return run_binary<bool, T>(plan, [](T a, T b) { return convert<bool>(a) || convert<bool>(b); });
    case BinaryOp::LogicalXor:
      return run_binary<bool, T>(plan, [](T a, T b) { return convert<bool>(a) != convert<bool>(b); });
    default: return;
  }
}

// bool: the ops that keep bool (the plan refused the others).
void bool_kernel(BinaryOp op, const IterationPlan& plan) {
  using B = bool;
  switch (op) {
    case BinaryOp::Add:  // + is or (alpha is true), * is and
    case BinaryOp::Maximum:
    case BinaryOp::BitwiseOr: return run_binary<B, B>(plan, [](B a, B b) { return a || b; });
    case BinaryOp::Mul:
    case BinaryOp::Minimum:
    case BinaryOp::BitwiseAnd: return run_binary<B, B>(plan, [](B a, B b) { return a && b; });
    case BinaryOp::BitwiseXor: return run_binary<B, B>(plan, [](B a, B b) { return a != b; });
    default: return;
  }
}

template <typename T>
void integer_kernel(BinaryOp op, const IterationPlan& plan, const Scalar& alpha) {
  const T w = alpha.to<T>();
  switch (op) {
    // Arithmetic wraps in an unsigned type (no signed-overflow UB).
    case BinaryOp::Add:
      return run_binary<T, T>(plan, [w](T a, T b) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(w) * static_cast<U>(b));
      });
    case BinaryOp::Sub:
      return run_binary<T, T>(plan, [w](T a, T b) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) - static_cast<U>(w) * static_cast<U>(b));
      });
    case BinaryOp::Mul:
      return run_binary<T, T>(plan, [](T a, T b) {
        using U = std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>;
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      });
    case BinaryOp::DivTrunc: return run_binary<T, T>(plan, int_div_trunc<T>);
    case BinaryOp::DivFloor: return run_binary<T, T>(plan, int_div_floor<T>);
    case BinaryOp::Remainder: return run_binary<T, T>(plan, int_remainder<T>);
    case BinaryOp::Fmod: return run_binary<T, T>(plan, int_fmod<T>);
    case BinaryOp::Pow: return run_binary<T, T>(plan, int_pow<T>);
    case BinaryOp::Maximum:
    case BinaryOp::ClampMin: return run_binary<T, T>(plan, [](T a, T b) { return a < b ? b : a; });
    case BinaryOp::Minimum:
    case BinaryOp::ClampMax: return run_binary<T, T>(plan, [](T a, T b) { return b < a ? b : a; });
    case BinaryOp::BitwiseAnd: return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(a & b); });
    case BinaryOp::BitwiseOr: return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(a | b); });
    case BinaryOp::BitwiseXor: return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(a ^ b); });
    case BinaryOp::LeftShift: return run_binary<T, T>(plan, shift_left<T>);
    case BinaryOp::RightShift: return run_binary<T, T>(plan, shift_right<T>);
    case BinaryOp::ThresholdBackward:  // threshold in range of T (checked by the plan)
      return run_binary<T, T>(plan, [w](T g, T x) { return x <= w ? T(0) : g; });
    default: return;  // div and atan2 promote to float; comparisons run compare_kernel
  }
}

template <typename T>
void floating_kernel(BinaryOp op, const IterationPlan& plan, const Scalar& alpha) {
  using M = opmath_t<T>;
  const M w = alpha.to<M>();
  switch (op) {
    case BinaryOp::Add: return run_binary<T, T>(plan, [w](T a, T b) { return static_cast<T>(M(a) + w * M(b)); });
    case BinaryOp::Sub: return run_binary<T, T>(plan, [w](T a, T b) { return static_cast<T>(M(a) - w * M(b)); });
    case BinaryOp::Mul: return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(M(a) * M(b)); });
    case BinaryOp::Div: return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(M(a) / M(b)); });
    case BinaryOp::DivTrunc:
      return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(std::trunc(M(a) / M(b))); });
    case BinaryOp::DivFloor:
      return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(float_div_floor<M>(a, b)); });
    case BinaryOp::Remainder:
      return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(float_remainder<M>(a, b)); });
    case BinaryOp::Fmod: return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(std::fmod(M(a), M(b))); });
    case BinaryOp::Pow: return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(std::pow(M(a), M(b))); });
    case BinaryOp::Atan2:
      return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(std::atan2(M(a), M(b))); });
    case BinaryOp::Maximum:
    case BinaryOp::ClampMin: return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(nan_max<M>(a, b)); });
    case BinaryOp::Minimum:
    case BinaryOp::ClampMax: return run_binary<T, T>(plan, [](T a, T b) { return static_cast<T>(nan_min<M>(a, b)); });
    // relu's gradient and PyTorch's ReluBackward0: NaN <= w is false, so a NaN self passes g.
    case BinaryOp::ThresholdBackward:
      return run_binary<T, T>(plan, [w](T g, T x) { return M(x) <= w ? T(0) : g; });
    default: return;  // bitwise ops refuse floats in the plan
  }
}

void binary_kernel(BinaryOp op, const IterationPlan& plan, const Scalar& alpha) {
  check_binary_values(op, plan);  // before anything is written
  visit_dtype(plan.common_dtype(), binary_op_name(op), [&]<typename T>() {
    if (binary_op_gives_bool(op)) compare_kernel<T>(op, plan);
    else if constexpr (std::is_same_v<T, bool>) bool_kernel(op, plan);
    else if constexpr (std::is_integral_v<T>) integer_kernel<T>(op, plan, alpha);
    else floating_kernel<T>(op, plan, alpha);
  });
  plan.finish();
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { dispatch::register_binary_kernels<&binary_kernel, &ternary_kernel>(m); }

}  // namespace anatomy::cpu
