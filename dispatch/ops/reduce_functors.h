// The arithmetic of the reductions, written once for every backend: each functor is host-device
// code that the CPU engine (backends/cpu/reduce_loops.h) and the CUDA kernels
// (backends/cuda/reduce/reduce.cuh) run, so both compute the same values; the engines differ
// only in the order they combine partial results. An engine runs an Op: a functor plus a
// write(out, acc) that stores project(acc), Store and StoreValueIndex below. Includes nothing
// that needs fmt, so CUDA translation units take it as it is.
//
// A functor, for input element type T:
//   using acc_t = ...;                    trivially copyable (CUDA moves it between threads)
//   acc_t identity() const;               the value of an empty reduction
//   acc_t step(acc_t a, T x, int64_t i);  fold element x, at reduced index i, into a
//   acc_t combine(acc_t a, acc_t b);      merge two partial results, in either order
//   R project(acc_t a) const;             the result, before the store converts it
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "anatomy/dispatch/ops/elementwise_scalar.h"

namespace anatomy::reduction {

using elementwise::infinity;
using elementwise::opmath_t;

// What a sum or product of T accumulates in: fp32 for the 2-byte floats and fp32, fp64 for
// fp64, int64 for the integers and bool.
template <typename T>
using reduce_acc_t =
    std::conditional_t<std::is_same_v<T, double>, double, std::conditional_t<std::is_integral_v<T>, int64_t, float>>;
// What norm and logsumexp accumulate in: fp64 for fp64, fp32 otherwise.
template <typename T>
using float_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename V>
ANATOMY_HOST_DEVICE inline bool is_nan_value(V v) {
  if constexpr (std::is_floating_point_v<V>) return elementwise::math::isnan(v);
  else return false;
}

// Integer sums and products wrap in two's complement, computed unsigned: no UB on overflow.
template <typename A>
ANATOMY_HOST_DEVICE inline A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return a + b;
}
template <typename A>
ANATOMY_HOST_DEVICE inline A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return a * b;
}

// ---- sum, mean, prod ----

template <typename T>
struct SumFn {
  using acc_t = reduce_acc_t<T>;
  // Steps ignore the index, so an engine may fold 16-byte vectors of elements.
  using vector_loads = std::true_type;
  double divisor;  // 1, or N for mean
  ANATOMY_HOST_DEVICE acc_t identity() const { return acc_t(0); }
  ANATOMY_HOST_DEVICE acc_t step(acc_t a, T x, int64_t) const { return wrap_add(a, convert<acc_t>(x)); }
  ANATOMY_HOST_DEVICE acc_t combine(acc_t a, acc_t b) const { return wrap_add(a, b); }
  // mean divides once, in the accumulation type (0 / 0: an empty mean is NaN).
  ANATOMY_HOST_DEVICE acc_t project(acc_t a) const {
    if constexpr (std::is_integral_v<acc_t>) return a;
    else return divisor == 1 ? a : static_cast<acc_t>(a / static_cast<acc_t>(divisor));
  }
};

template <typename T>
struct ProdFn {
  using acc_t = reduce_acc_t<T>;
  ANATOMY_HOST_DEVICE acc_t identity() const { return acc_t(1); }
  ANATOMY_HOST_DEVICE acc_t step(acc_t a, T x, int64_t) const { return wrap_mul(a, convert<acc_t>(x)); }
  ANATOMY_HOST_DEVICE acc_t combine(acc_t a, acc_t b) const { return wrap_mul(a, b); }
  ANATOMY_HOST_DEVICE acc_t project(acc_t a) const { return a; }
};

// ---- max, min, argmax, argmin ----

// Values compare in float for the 2-byte floats, as themselves otherwise.
template <typename T>
using cmp_t = opmath_t<T>;

// `after` is a better extreme than `before` (max: larger; min: smaller); NaN beats everything.
template <bool IsMax, typename V>
ANATOMY_HOST_DEVICE inline bool better(V after, V before) {
  if (is_nan_value(before)) return false;
  if (is_nan_value(after)) return true;
  return IsMax ? after > before : after < before;
}

// The identity: nothing is worse.
template <bool IsMax, typename V>
ANATOMY_HOST_DEVICE inline V worst() {
  if constexpr (std::is_same_v<V, bool>) {
    return !IsMax;
  } else if constexpr (std::is_floating_point_v<V>) {
    return IsMax ? -infinity<V>() : infinity<V>();
  } else if constexpr (std::is_signed_v<V>) {
    // Two's complement: the lowest value is the top bit alone, the highest all other bits.
    using U = std::make_unsigned_t<V>;
    const U top = static_cast<U>(U(1) << (sizeof(V) * 8 - 1));
    return IsMax ? static_cast<V>(top) : static_cast<V>(static_cast<U>(~top));
  } else {
    return IsMax ? V(0) : static_cast<V>(~V(0));
  }
}

template <typename T, bool IsMax>
struct ExtremeFn {
  using acc_t = cmp_t<T>;
  ANATOMY_HOST_DEVICE acc_t identity() const { return worst<IsMax, acc_t>(); }
  ANATOMY_HOST_DEVICE acc_t step(acc_t a, T x, int64_t) const { return combine(a, convert<acc_t>(x)); }
  ANATOMY_HOST_DEVICE acc_t combine(acc_t a, acc_t b) const { return better<IsMax>(b, a) ? b : a; }
  ANATOMY_HOST_DEVICE acc_t project(acc_t a) const { return a; }
};

template <typename V>
struct ValueIndex {
  V value;
  int64_t index;  // -1: no element yet
};

// The value and the index of the first extreme element (a NaN counts as the extreme).
template <typename T, bool IsMax>
struct ArgExtremeFn {
  using acc_t = ValueIndex<cmp_t<T>>;
  ANATOMY_HOST_DEVICE acc_t identity() const { return {worst<IsMax, cmp_t<T>>(), -1}; }
  ANATOMY_HOST_DEVICE acc_t step(acc_t a, T x, int64_t i) const { return combine(a, {convert<cmp_t<T>>(x), i}); }
  // Partials arrive in any order (lanes and threads interleave the indices): ties go to the
  // smaller index.
  ANATOMY_HOST_DEVICE acc_t combine(acc_t a, acc_t b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    if (better<IsMax>(b.value, a.value)) return b;
    if (better<IsMax>(a.value, b.value)) return a;
    return b.index < a.index ? b : a;  // equal, or both NaN
  }
  ANATOMY_HOST_DEVICE acc_t project(acc_t a) const { return a; }
};

// ---- var, std ----

struct Moments {
  double mean, m2;
  int64_t n;
};

// Welford's update per element and Chan's merge of partials, in fp64 for every dtype: no
// cancellation as with sum(x^2) - sum(x)^2.
template <typename T>
struct VarFn {
  using acc_t = Moments;
  double correction;
  bool take_sqrt;
  ANATOMY_HOST_DEVICE acc_t identity() const { return {0, 0, 0}; }
  ANATOMY_HOST_DEVICE acc_t step(acc_t a, T x, int64_t) const {
    const double v = convert<double>(x);
    a.n += 1;
    const double d = v - a.mean;
    a.mean += d / static_cast<double>(a.n);
    a.m2 += d * (v - a.mean);
    return a;
  }
  ANATOMY_HOST_DEVICE acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = static_cast<double>(a.n + b.n), d = b.mean - a.mean;
    return {a.mean + d * static_cast<double>(b.n) / n,
            a.m2 + b.m2 + d * d * static_cast<double>(a.n) * static_cast<double>(b.n) / n, a.n + b.n};
  }
  // Divided by max(0, N - correction): N <= correction gives inf or NaN, as in PyTorch.
  ANATOMY_HOST_DEVICE double project(acc_t a) const {
    const double dof = static_cast<double>(a.n) - correction;
    const double v = a.m2 / (dof > 0 ? dof : 0.0);
    return take_sqrt ? elementwise::math::sqrt(v) : v;
  }
};

// ---- norm ----

enum class NormKind { Inf, NegInf, Zero, One, Two, P };

// |x|^p summed in float_acc_t, or the max / min / count of |x| for p = inf, -inf, 0.
template <typename T, NormKind K>
struct NormFn {
  using acc_t = float_acc_t<T>;
  acc_t p;
  ANATOMY_HOST_DEVICE acc_t identity() const { return K == NormKind::NegInf ? infinity<acc_t>() : acc_t(0); }
  ANATOMY_HOST_DEVICE acc_t step(acc_t a, T x, int64_t) const {
    const acc_t v = elementwise::math::fabs(convert<acc_t>(x));
    if constexpr (K == NormKind::Inf || K == NormKind::NegInf) return combine(a, v);
    else if constexpr (K == NormKind::Zero) return a + (v != 0 ? acc_t(1) : acc_t(0));
    else if constexpr (K == NormKind::One) return a + v;
    else if constexpr (K == NormKind::Two) return a + v * v;
    else return a + elementwise::math::pow(v, p);
  }
  ANATOMY_HOST_DEVICE acc_t combine(acc_t a, acc_t b) const {
    if constexpr (K == NormKind::Inf) return is_nan_value(a) || is_nan_value(b) ? a + b : (a < b ? b : a);
    else if constexpr (K == NormKind::NegInf) return is_nan_value(a) || is_nan_value(b) ? a + b : (b < a ? b : a);
    else return a + b;
  }
  ANATOMY_HOST_DEVICE acc_t project(acc_t a) const {
    if constexpr (K == NormKind::Two) return elementwise::math::sqrt(a);
    else if constexpr (K == NormKind::P) return elementwise::math::pow(a, acc_t(1) / p);
    else return a;
  }
};

// Calls f.template operator()<K>() with the NormKind of the p-norm (host code, where a backend
// picks its kernel).
template <typename F>
void visit_norm_kind(double p, F&& f) {
  if (std::isinf(p)) {
    if (p > 0) f.template operator()<NormKind::Inf>();
    else f.template operator()<NormKind::NegInf>();
  } else if (p == 0) {
    f.template operator()<NormKind::Zero>();
  } else if (p == 1) {
    f.template operator()<NormKind::One>();
  } else if (p == 2) {
    f.template operator()<NormKind::Two>();
  } else {
    f.template operator()<NormKind::P>();
  }
}

// ---- logsumexp ----

template <typename A>
struct MaxSum {
  A max, sum;  // the largest element so far and sum(exp(x - max))
};

// A running max and a sum of exp(x - max) rescaled when the max grows: one pass, no overflow.
template <typename T>
struct LogSumExpFn {
  using A = float_acc_t<T>;
  using acc_t = MaxSum<A>;
  ANATOMY_HOST_DEVICE acc_t identity() const { return {-infinity<A>(), A(0)}; }
  ANATOMY_HOST_DEVICE acc_t step(acc_t a, T x, int64_t) const { return combine(a, {convert<A>(x), A(1)}); }
  ANATOMY_HOST_DEVICE acc_t combine(acc_t a, acc_t b) const {
    if (b.sum == 0) return a;  // an empty partial (or exp(-inf))
    if (a.sum == 0) return b;
    if (is_nan_value(a.max) || is_nan_value(b.max)) return {a.max + b.max, a.sum + b.sum};
    if (a.max == b.max) return {a.max, a.sum + b.sum};  // also two +inf
    if (a.max < b.max) {
      const acc_t t = a;
      a = b;
      b = t;
    }
    return {a.max, a.sum + b.sum * elementwise::math::exp(b.max - a.max)};
  }
  ANATOMY_HOST_DEVICE A project(acc_t a) const {
    return a.sum == 0 ? -infinity<A>() : a.max + elementwise::math::log(a.sum);
  }
};

// ---- any, all, count_nonzero ----

// An element is true when nonzero, NaN included.
template <typename T, bool IsAny>
struct AnyAllFn {
  using acc_t = bool;
  ANATOMY_HOST_DEVICE acc_t identity() const { return !IsAny; }
  ANATOMY_HOST_DEVICE acc_t step(acc_t a, T x, int64_t) const {
    return IsAny ? (a || convert<bool>(x)) : (a && convert<bool>(x));
  }
  ANATOMY_HOST_DEVICE acc_t combine(acc_t a, acc_t b) const { return IsAny ? (a || b) : (a && b); }
  ANATOMY_HOST_DEVICE acc_t project(acc_t a) const { return a; }
};

template <typename T>
struct CountNonzeroFn {
  using acc_t = int64_t;
  ANATOMY_HOST_DEVICE acc_t identity() const { return 0; }
  ANATOMY_HOST_DEVICE acc_t step(acc_t a, T x, int64_t) const { return a + (convert<bool>(x) ? 1 : 0); }
  ANATOMY_HOST_DEVICE acc_t combine(acc_t a, acc_t b) const { return a + b; }
  ANATOMY_HOST_DEVICE acc_t project(acc_t a) const { return a; }
};

// ---- where results go ----

// The Op an engine runs: a functor whose result for output o is stored at out[o], converted to
// Out (every engine lays out its results densely, core/reduction_plan.h).
template <typename Fn, typename Out>
struct Store : Fn {
  Out* out;
  ANATOMY_HOST_DEVICE void write(int64_t o, typename Fn::acc_t a) const { out[o] = convert<Out>(this->project(a)); }
};

// ArgExtremeFn's value (unless `values` is null: argmax, argmin) and index.
template <typename T, bool IsMax>
struct StoreValueIndex : ArgExtremeFn<T, IsMax> {
  T* values;
  int64_t* indices;
  ANATOMY_HOST_DEVICE void write(int64_t o, ValueIndex<cmp_t<T>> a) const {
    if (values) values[o] = convert<T>(a.value);
    indices[o] = a.index;
  }
};

}  // namespace anatomy::reduction
