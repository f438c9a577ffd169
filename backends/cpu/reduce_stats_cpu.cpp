// CPU: var and std (Welford's update per element, Chan's formula to merge partials, in fp64:
// no cancellation as with sum(x^2) - sum(x)^2), norm (|x|^p summed in the sum's accumulation
// type, or the max / min / count of |x| for p = inf, -inf, 0) and logsumexp (a running max and
// a sum of exp(x - max) rescaled when the max grows: one pass, no overflow).
#include <limits>

#include "anatomy/backends/cpu/reduce_cpu.h"
#include "anatomy/backends/cpu/reduce_loops.h"

namespace anatomy::cpu {
namespace {

struct Moments {
  double mean = 0, m2 = 0;
  int64_t n = 0;
};

template <typename T>
struct VarOp {
  using acc_t = Moments;
  T* out;
  double correction;
  bool take_sqrt;
  acc_t identity() const { return {}; }
  acc_t step(acc_t a, T x, int64_t) const {
    const double v = convert<double>(x);
    a.n += 1;
    const double d = v - a.mean;
    a.mean += d / static_cast<double>(a.n);
    a.m2 += d * (v - a.mean);
    return a;
  }
  acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = static_cast<double>(a.n + b.n), d = b.mean - a.mean;
    return {a.mean + d * static_cast<double>(b.n) / n,
            a.m2 + b.m2 + d * d * static_cast<double>(a.n) * static_cast<double>(b.n) / n, a.n + b.n};
  }
  void write(int64_t o, acc_t a) const {
    // Divided by max(0, N - correction): N <= correction gives inf or NaN, as in PyTorch.
    const double v = a.m2 / std::max(0.0, static_cast<double>(a.n) - correction);
    out[o] = convert<T>(take_sqrt ? std::sqrt(v) : v);
  }
};

enum class NormKind { Inf, NegInf, Zero, One, Two, P };

template <typename T, NormKind K>
struct NormOp {
  using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;
  T* out;
  acc_t p;
  acc_t identity() const {
    return K == NormKind::NegInf ? std::numeric_limits<acc_t>::infinity() : acc_t(0);
  }
  acc_t step(acc_t a, T x, int64_t) const {
    const acc_t v = std::abs(convert<acc_t>(x));
    if constexpr (K == NormKind::Inf) return combine(a, v);
    else if constexpr (K == NormKind::NegInf) return combine(a, v);
    else if constexpr (K == NormKind::Zero) return a + (v != 0 ? acc_t(1) : acc_t(0));
    else if constexpr (K == NormKind::One) return a + v;
    else if constexpr (K == NormKind::Two) return a + v * v;
    else return a + std::pow(v, p);
  }
  acc_t combine(acc_t a, acc_t b) const {
    if constexpr (K == NormKind::Inf) return std::isnan(a) || std::isnan(b) ? a + b : std::max(a, b);
    else if constexpr (K == NormKind::NegInf) return std::isnan(a) || std::isnan(b) ? a + b : std::min(a, b);
    else return a + b;
  }
  void write(int64_t o, acc_t a) const {
    if constexpr (K == NormKind::Two) a = std::sqrt(a);
    else if constexpr (K == NormKind::P) a = std::pow(a, acc_t(1) / p);
    out[o] = convert<T>(a);
  }
};

template <typename A>
struct MaxSum {
  A max, sum;  // the largest element so far and sum(exp(x - max))
};

template <typename T>
struct LogSumExpOp {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  using acc_t = MaxSum<A>;
  T* out;
  acc_t identity() const { return {-std::numeric_limits<A>::infinity(), A(0)}; }
  acc_t step(acc_t a, T x, int64_t) const { return combine(a, {convert<A>(x), A(1)}); }
  acc_t combine(acc_t a, acc_t b) const {
    if (b.sum == 0) return a;  // an empty partial (or exp(-inf))
    if (a.sum == 0) return b;
    if (std::isnan(a.max) || std::isnan(b.max)) return {a.max + b.max, a.sum + b.sum};
    if (a.max == b.max) return {a.max, a.sum + b.sum};  // also two +inf
    if (a.max < b.max) std::swap(a, b);
    return {a.max, a.sum + b.sum * std::exp(b.max - a.max)};
  }
  void write(int64_t o, acc_t a) const {
    out[o] = convert<T>(a.sum == 0 ? -std::numeric_limits<A>::infinity() : a.max + std::log(a.sum));
  }
};

template <typename T>
void norm_loop(const Reduction& r, const Tensor& in, double p) {
  T* out = static_cast<T*>(r.values.data_ptr());
  using A = typename NormOp<T, NormKind::P>::acc_t;
  const A pa = static_cast<A>(p);
  if (std::isinf(p)) {
    if (p > 0) reduce_kernel<T>(r.plan, in, NormOp<T, NormKind::Inf>{out, pa});
    else reduce_kernel<T>(r.plan, in, NormOp<T, NormKind::NegInf>{out, pa});
  } else if (p == 0) {
    reduce_kernel<T>(r.plan, in, NormOp<T, NormKind::Zero>{out, pa});
  } else if (p == 1) {
    reduce_kernel<T>(r.plan, in, NormOp<T, NormKind::One>{out, pa});
  } else if (p == 2) {
    reduce_kernel<T>(r.plan, in, NormOp<T, NormKind::Two>{out, pa});
  } else {
    reduce_kernel<T>(r.plan, in, NormOp<T, NormKind::P>{out, pa});
  }
}

}  // namespace

void stats_loop(ReduceKind kind, const Reduction& r, const dispatch::ReduceArgs& args) {
  const Tensor in = dense_reduction_input(r.plan, r.input);
  visit_dtype(in.dtype(), r.plan.op(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T> || is_reduced_float_v<T>) {
      T* out = static_cast<T*>(r.values.data_ptr());
      switch (kind) {
        case ReduceKind::Var:
        case ReduceKind::Std:
          reduce_kernel<T>(r.plan, in, VarOp<T>{out, args.correction, kind == ReduceKind::Std});
          break;
        case ReduceKind::Norm: norm_loop<T>(r, in, args.p); break;
        case ReduceKind::LogSumExp: reduce_kernel<T>(r.plan, in, LogSumExpOp<T>{out}); break;
        default: break;
      }
    } else {
      ANATOMY_THROW(TypeError, "{}: expected a floating point input, got {}", r.plan.op(), name(in.dtype()));
    }
  });
}

}  // namespace anatomy::cpu
