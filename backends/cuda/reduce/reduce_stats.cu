// CUDA kernels of var and std (Welford's update per element and Chan's merge of partials, in
// fp64 for every dtype, as on the CPU: no cancellation), norm (|x|^p summed in fp32, fp64 for
// fp64; the max / min / count of |x| for p = inf, -inf, 0) and logsumexp (a running max and a
// sum of exp(x - max), rescaled when the max grows). backends/cpu/reduce_stats_cpu.cpp's ops on
// the device; floating dtypes only.
#include <cmath>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/reduce/reduce.cuh"

namespace anatomy::cuda {
namespace {

struct Moments {
  double mean, m2;
  int64_t n;
};

template <typename T>
struct VarOp {
  using acc_t = Moments;
  T* out;
  double correction;
  bool take_sqrt;
  __device__ acc_t identity() const { return {0, 0, 0}; }
  __device__ acc_t step(acc_t a, T x, int64_t) const {
    const double v = convert<double>(x);
    a.n += 1;
    const double d = v - a.mean;
    a.mean += d / static_cast<double>(a.n);
    a.m2 += d * (v - a.mean);
    return a;
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = static_cast<double>(a.n + b.n), d = b.mean - a.mean;
    return {a.mean + d * static_cast<double>(b.n) / n,
            a.m2 + b.m2 + d * d * static_cast<double>(a.n) * static_cast<double>(b.n) / n, a.n + b.n};
  }
  __device__ void write(int64_t o, acc_t a) const {
    // Divided by max(0, N - correction): N <= correction gives inf or NaN, as in PyTorch.
    const double v = a.m2 / fmax(0.0, static_cast<double>(a.n) - correction);
    out[o] = convert<T>(take_sqrt ? sqrt(v) : v);
  }
};

enum class NormKind { Inf, NegInf, Zero, One, Two, P };

template <typename T, NormKind K>
struct NormOp {
  using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;
  T* out;
  acc_t p;
  __device__ acc_t identity() const { return K == NormKind::NegInf ? infinity<acc_t>() : acc_t(0); }
  __device__ acc_t step(acc_t a, T x, int64_t) const {
    const acc_t v = fabs(convert<acc_t>(x));
    if constexpr (K == NormKind::Inf || K == NormKind::NegInf) return combine(a, v);
    else if constexpr (K == NormKind::Zero) return a + (v != 0 ? acc_t(1) : acc_t(0));
    else if constexpr (K == NormKind::One) return a + v;
    else if constexpr (K == NormKind::Two) return a + v * v;
    else return a + pow(v, p);
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    // std::max / std::min of the CPU, once NaN is handled.
    if constexpr (K == NormKind::Inf) return isnan(a) || isnan(b) ? a + b : (a < b ? b : a);
    else if constexpr (K == NormKind::NegInf) return isnan(a) || isnan(b) ? a + b : (b < a ? b : a);
    else return a + b;
  }
  __device__ void write(int64_t o, acc_t a) const {
    if constexpr (K == NormKind::Two) a = sqrt(a);
    else if constexpr (K == NormKind::P) a = pow(a, acc_t(1) / p);
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
  __device__ acc_t identity() const { return {-infinity<A>(), A(0)}; }
  __device__ acc_t step(acc_t a, T x, int64_t) const { return combine(a, {convert<A>(x), A(1)}); }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (b.sum == 0) return a;  // an empty partial (or exp(-inf))
    if (a.sum == 0) return b;
    if (isnan(a.max) || isnan(b.max)) return {a.max + b.max, a.sum + b.sum};
    if (a.max == b.max) return {a.max, a.sum + b.sum};  // also two +inf
    if (a.max < b.max) {
      const acc_t t = a;
      a = b;
      b = t;
    }
    return {a.max, a.sum + b.sum * exp(b.max - a.max)};
  }
  __device__ void write(int64_t o, acc_t a) const {
    out[o] = convert<T>(a.sum == 0 ? -infinity<A>() : a.max + log(a.sum));
  }
};

template <typename T>
void launch_norm(const ReduceGeometry& g, const ReduceBuffers& b, double p, cudaStream_t stream) {
  T* out = static_cast<T*>(b.values);
  using A = typename NormOp<T, NormKind::P>::acc_t;
  const A pa = static_cast<A>(p);
  if (std::isinf(p)) {
    if (p > 0) launch_reduce<T>(g, b.input, b.scratch, NormOp<T, NormKind::Inf>{out, pa}, stream);
    else launch_reduce<T>(g, b.input, b.scratch, NormOp<T, NormKind::NegInf>{out, pa}, stream);
  } else if (p == 0) {
    launch_reduce<T>(g, b.input, b.scratch, NormOp<T, NormKind::Zero>{out, pa}, stream);
  } else if (p == 1) {
    launch_reduce<T>(g, b.input, b.scratch, NormOp<T, NormKind::One>{out, pa}, stream);
  } else if (p == 2) {
    launch_reduce<T>(g, b.input, b.scratch, NormOp<T, NormKind::Two>{out, pa}, stream);
  } else {
    launch_reduce<T>(g, b.input, b.scratch, NormOp<T, NormKind::P>{out, pa}, stream);
  }
}

}  // namespace

void launch_reduce_stats(StatsReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b, double a,
                         cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      T* out = static_cast<T*>(b.values);
      switch (op) {
        case StatsReduceOp::Var:
        case StatsReduceOp::Std:
          launch_reduce<T>(g, b.input, b.scratch, VarOp<T>{out, a, op == StatsReduceOp::Std}, stream);
          break;
        case StatsReduceOp::Norm: launch_norm<T>(g, b, a, stream); break;
        case StatsReduceOp::LogSumExp: launch_reduce<T>(g, b.input, b.scratch, LogSumExpOp<T>{out}, stream); break;
      }
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_reduce_stats: not a floating dtype");
}

}  // namespace anatomy::cuda
