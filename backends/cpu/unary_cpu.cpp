// CPU: the element-wise unary operators over the iteration plan. fp16 and bf16 compute in float
// and round once; each chunk of the plan is a plain loop the compiler vectorizes when the
// operands are contiguous and the function is simple (neg, abs, relu, rounding, predicates).
// exp, log, tanh, sigmoid, gelu and the other transcendental functions run the branch-free fp32
// loops of vec_loops.h instead of a libm call per element, which no compiler vectorizes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "anatomy/backends/cpu/vec_loops.h"

#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/unary_registration.h"

namespace anatomy::cpu {
namespace {

// The type arithmetic happens in: float for the 2-byte floats, the type itself otherwise.
template <typename T>
using opmath_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

// out = f(in) over the plan; In and Out are the element types of the input and the output.
template <typename Out, typename In, typename F>
void run_loop(const IterationPlan& plan, F f) {
  plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      Out* out = reinterpret_cast<Out*>(data[0]);
      const In* in = reinterpret_cast<const In*>(data[1]);
      for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<Out*>(data[0] + i * s[0]) = f(*reinterpret_cast<const In*>(data[1] + i * s[1]));
      }
    }
  });
}

// fp32, fp16 and bf16 through the vectorized fp32 loops (backends/cpu/vec_loops.h). Contiguous
// fp32 runs the loop on the operands themselves; anything else goes through blocks of floats on
// the stack (converted on the way in, rounded once on the way out), so strided operands and the
// 2-byte types also run the vectorized loop.
template <typename T>
void run_vec(const IterationPlan& plan, VecFn fn, VecArgs args = {}) {
  const VecLoop loop = vec_loop(fn);
  plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
      if (s[0] == sizeof(float) && s[1] == sizeof(float)) {
        loop(reinterpret_cast<const float*>(data[1]), reinterpret_cast<float*>(data[0]), n, args);
        return;
      }
    }
    constexpr int64_t kBlock = 256;
    float in[kBlock], out[kBlock];
    for (int64_t begin = 0; begin < n; begin += kBlock) {
      const int64_t m = std::min(kBlock, n - begin);
      const char* src = data[1] + begin * s[1];
      for (int64_t i = 0; i < m; ++i) in[i] = static_cast<float>(*reinterpret_cast<const T*>(src + i * s[1]));
      loop(in, out, m, args);
      char* dst = data[0] + begin * s[0];
      for (int64_t i = 0; i < m; ++i) *reinterpret_cast<T*>(dst + i * s[0]) = static_cast<T>(out[i]);
    }
  });
}

// The functions with a vectorized fp32 loop, or nullopt.
std::optional<VecFn> vec_fn(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp: return VecFn::Exp;
    case UnaryOp::Expm1: return VecFn::Expm1;
    case UnaryOp::Log: return VecFn::Log;
    case UnaryOp::Log1p: return VecFn::Log1p;
    case UnaryOp::Sigmoid: return VecFn::Sigmoid;
    case UnaryOp::Silu: return VecFn::Silu;
    case UnaryOp::Tanh: return VecFn::Tanh;
    case UnaryOp::Erf: return VecFn::Erf;
    case UnaryOp::Gelu: return VecFn::Gelu;
    case UnaryOp::GeluTanh: return VecFn::GeluTanh;
    case UnaryOp::Softplus: return VecFn::Softplus;
    default: return std::nullopt;
  }
}

// out = f(in) in T's opmath type, rounded once to T.
template <typename T, typename F>
void run_math(const IterationPlan& plan, F f) {
  using M = opmath_t<T>;
  run_loop<T, T>(plan, [f](T x) { return static_cast<T>(f(static_cast<M>(x))); });
}

// The operators that keep an integer or bool dtype (the plan casts nothing here).
template <typename T>
void integral_kernel(UnaryOp op, const IterationPlan& plan) {
  if constexpr (std::is_same_v<T, bool>) {
    // neg, abs, the rounding ones and relu refuse bool in plan_unary; sign and nan_to_num keep it.
    if (op == UnaryOp::BitwiseNot) run_loop<bool, bool>(plan, [](bool x) { return !x; });
    else run_loop<bool, bool>(plan, [](bool x) { return x; });
  } else {
    switch (op) {
      case UnaryOp::Neg:
        // Unsigned negation wraps, as in PyTorch.
        run_loop<T, T>(plan, [](T x) { return static_cast<T>(-x); });
        break;
      case UnaryOp::Abs:
        if constexpr (std::is_signed_v<T>) run_loop<T, T>(plan, [](T x) { return static_cast<T>(x < 0 ? -x : x); });
        else run_loop<T, T>(plan, [](T x) { return x; });
        break;
      case UnaryOp::Sign:
        if constexpr (std::is_signed_v<T>) run_loop<T, T>(plan, [](T x) { return static_cast<T>((T(0) < x) - (x < T(0))); });
        else run_loop<T, T>(plan, [](T x) { return static_cast<T>(x != 0); });
        break;
      case UnaryOp::Relu:
        if constexpr (std::is_signed_v<T>) run_loop<T, T>(plan, [](T x) { return x < T(0) ? T(0) : x; });
        else run_loop<T, T>(plan, [](T x) { return x; });
        break;
      case UnaryOp::BitwiseNot:
        run_loop<T, T>(plan, [](T x) { return static_cast<T>(~x); });
        break;
      default:  // floor, ceil, round, trunc and nan_to_num leave integers as they are
        run_loop<T, T>(plan, [](T x) { return x; });
        break;
    }
  }
}

template <typename T>
void floating_kernel(UnaryOp op, const IterationPlan& plan, const UnaryParams& p) {
  using M = opmath_t<T>;
  // fp64 keeps the C library's functions (below): the vectorized ones are fp32 only.
  if constexpr (!std::is_same_v<T, double>) {
    if (const std::optional<VecFn> fn = vec_fn(op)) {
      return run_vec<T>(plan, *fn, {static_cast<float>(p.beta), static_cast<float>(p.threshold)});
    }
  }
  switch (op) {
    case UnaryOp::Neg: return run_math<T>(plan, [](M x) { return -x; });
    case UnaryOp::Abs: return run_math<T>(plan, [](M x) { return std::abs(x); });
    // NaN stays NaN (NumPy's sign; PyTorch's gives 0).
    case UnaryOp::Sign: return run_math<T>(plan, [](M x) { return std::isnan(x) ? x : M((M(0) < x) - (x < M(0))); });
    case UnaryOp::Floor: return run_math<T>(plan, [](M x) { return std::floor(x); });
    case UnaryOp::Ceil: return run_math<T>(plan, [](M x) { return std::ceil(x); });
    // The default rounding mode: half to even.
    case UnaryOp::Round: return run_math<T>(plan, [](M x) { return std::nearbyint(x); });
    case UnaryOp::Trunc: return run_math<T>(plan, [](M x) { return std::trunc(x); });
    // x < 0 is false for NaN, so NaN propagates (PyTorch's clamp_min does too).
    case UnaryOp::Relu: return run_math<T>(plan, [](M x) { return x < M(0) ? M(0) : x; });
    case UnaryOp::NanToNum: {
      // The replacements are rounded to T first, so the final rounding keeps them exact.
      auto as_t = [](double v) { return static_cast<M>(static_cast<T>(v)); };
      const M nan = as_t(p.nan.value_or(0.0));
      const M posinf = p.posinf ? as_t(*p.posinf) : static_cast<M>(std::numeric_limits<T>::max());
      const M neginf = p.neginf ? as_t(*p.neginf) : static_cast<M>(std::numeric_limits<T>::lowest());
      const M inf = std::numeric_limits<M>::infinity();
      return run_math<T>(plan, [=](M x) { return std::isnan(x) ? nan : x == inf ? posinf : x == -inf ? neginf : x; });
    }
    case UnaryOp::Exp: return run_math<T>(plan, [](M x) { return std::exp(x); });
    case UnaryOp::Exp2: return run_math<T>(plan, [](M x) { return std::exp2(x); });
    case UnaryOp::Expm1: return run_math<T>(plan, [](M x) { return std::expm1(x); });
    case UnaryOp::Log: return run_math<T>(plan, [](M x) { return std::log(x); });
    case UnaryOp::Log1p: return run_math<T>(plan, [](M x) { return std::log1p(x); });
    case UnaryOp::Log2: return run_math<T>(plan, [](M x) { return std::log2(x); });
    case UnaryOp::Sqrt: return run_math<T>(plan, [](M x) { return std::sqrt(x); });
    case UnaryOp::Rsqrt: return run_math<T>(plan, [](M x) { return M(1) / std::sqrt(x); });
    case UnaryOp::Sin: return run_math<T>(plan, [](M x) { return std::sin(x); });
    case UnaryOp::Cos: return run_math<T>(plan, [](M x) { return std::cos(x); });
    case UnaryOp::Tan: return run_math<T>(plan, [](M x) { return std::tan(x); });
    case UnaryOp::Tanh: return run_math<T>(plan, [](M x) { return std::tanh(x); });
    case UnaryOp::Sigmoid: return run_math<T>(plan, [](M x) { return M(1) / (M(1) + std::exp(-x)); });
    case UnaryOp::Silu: return run_math<T>(plan, [](M x) { return x / (M(1) + std::exp(-x)); });
    case UnaryOp::Erf: return run_math<T>(plan, [](M x) { return std::erf(x); });
    case UnaryOp::Reciprocal: return run_math<T>(plan, [](M x) { return M(1) / x; });
    case UnaryOp::Gelu: {
      constexpr M kRsqrt2 = M(0.70710678118654752440);
      return run_math<T>(plan, [](M x) { return x * M(0.5) * (M(1) + std::erf(x * kRsqrt2)); });
    }
    case UnaryOp::GeluTanh: {
      constexpr M kSqrt2OverPi = M(0.79788456080286535588), kCoeff = M(0.044715);
      return run_math<T>(plan, [](M x) {
        return M(0.5) * x * (M(1) + std::tanh(kSqrt2OverPi * (x + kCoeff * x * x * x)));
      });
    }
    case UnaryOp::Softplus: {
      // Above the threshold log1p(exp(beta x)) / beta equals x to working precision (and exp
      // would overflow): PyTorch's rule.
      const M beta = static_cast<M>(p.beta), threshold = static_cast<M>(p.threshold);
      return run_math<T>(plan, [=](M x) { return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta; });
    }
    case UnaryOp::BitwiseNot:  // refused for floats in plan_unary
    case UnaryOp::Isnan:
    case UnaryOp::Isinf:
    case UnaryOp::Isfinite:
    case UnaryOp::LogicalNot:
      break;
  }
  ANATOMY_INTERNAL_ASSERT(false, "unary_cpu: {} reached the floating kernel", unary_op_name(op));
}

// Bool results computed from T's values.
template <typename T>
void predicate_kernel(UnaryOp op, const IterationPlan& plan) {
  using M = opmath_t<T>;
  switch (op) {
    case UnaryOp::LogicalNot:
      return run_loop<bool, T>(plan, [](T x) { return static_cast<M>(x) == M(0); });
    case UnaryOp::Isnan:
      if constexpr (is_float_v<T>) return run_loop<bool, T>(plan, [](T x) { return std::isnan(static_cast<M>(x)); });
      else return run_loop<bool, T>(plan, [](T) { return false; });
    case UnaryOp::Isinf:
      if constexpr (is_float_v<T>) return run_loop<bool, T>(plan, [](T x) { return std::isinf(static_cast<M>(x)); });
      else return run_loop<bool, T>(plan, [](T) { return false; });
    case UnaryOp::Isfinite:
      if constexpr (is_float_v<T>) return run_loop<bool, T>(plan, [](T x) { return std::isfinite(static_cast<M>(x)); });
      else return run_loop<bool, T>(plan, [](T) { return true; });
    default:
      break;
  }
  ANATOMY_INTERNAL_ASSERT(false, "unary_cpu: {} reached the predicate kernel", unary_op_name(op));
}

void unary_kernel(UnaryOp op, const IterationPlan& plan, const UnaryParams& params) {
  visit_dtype(plan.common_dtype(), unary_op_name(op), [&]<typename T>() {
    if (unary_op_kind(op) == UnaryKind::Predicate) predicate_kernel<T>(op, plan);
    else if constexpr (is_float_v<T>) floating_kernel<T>(op, plan, params);
    else integral_kernel<T>(op, plan);
  });
  plan.finish();
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { dispatch::register_unary_kernels<&unary_kernel>(m); }

}  // namespace anatomy::cpu
