// CPU: where, lerp and clamp (both bounds) over a ternary iteration plan: one loop per op, all
// four operands of the plan's common dtype (where's condition was cast to it by the plan).
#include <cmath>
#include <limits>
#include <type_traits>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/ternary_rules.h"

namespace anatomy::cpu {
namespace {

template <typename T>
using opmath_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

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
        *reinterpret_cast<T*>(data[0] + i * s[0]) = f(*reinterpret_cast<const T*>(data[1] + i * s[1]),
                                                      *reinterpret_cast<const T*>(data[2] + i * s[2]),
                                                      *reinterpret_cast<const T*>(data[3] + i * s[3]));
      }
    }
  });
}

}  // namespace

void ternary_kernel(TernaryOp op, const IterationPlan& plan) {
  visit_dtype(plan.common_dtype(), ternary_op_name(op), [&]<typename T>() {
    using M = opmath_t<T>;
    switch (op) {
      case TernaryOp::Where:
        run_ternary<T>(plan, [](T c, T a, T b) { return convert<bool>(c) ? a : b; });
        break;
      case TernaryOp::Lerp:
        // PyTorch's two-sided form: exact at both ends (weight 0 gives self, 1 gives end).
        if constexpr (!std::is_integral_v<T>) {
          run_ternary<T>(plan, [](T a, T b, T w) {
            const M x = M(a), y = M(b), t = M(w);
            return static_cast<T>(std::abs(t) < M(0.5) ? x + t * (y - x) : y - (y - x) * (M(1) - t));
          });
        }
        break;
      case TernaryOp::Clamp:
        if constexpr (std::is_integral_v<T>) {
          run_ternary<T>(plan, [](T x, T lo, T hi) {
            const T m = x < lo ? lo : x;
            return hi < m ? hi : m;
          });
        } else {
          // NaN in any operand gives NaN; min > max gives max.
          run_ternary<T>(plan, [](T a, T b, T c) {
            const M x = M(a), lo = M(b), hi = M(c);
            if (std::isnan(x) || std::isnan(lo) || std::isnan(hi)) return static_cast<T>(std::numeric_limits<M>::quiet_NaN());
            const M m = x < lo ? lo : x;
            return static_cast<T>(hi < m ? hi : m);
          });
        }
        break;
    }
  });
  plan.finish();
}

}  // namespace anatomy::cpu
