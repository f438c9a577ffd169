// backends/cpu/vec_loops.h's fp64 loops, compiled for the baseline (the C library's functions),
// AVX2 with FMA and AVX-512 (vec_math_f64.h's). Compiled with vec_loops.cpp's flags
// (CMakeLists.txt): -fno-trapping-math lets GCC compute both sides of a select, and
// -ffp-contract=fast makes each a * b + c one FMA in the wide copies.
#include <cmath>

#include "anatomy/backends/cpu/prefetch_loop.h"
#include "anatomy/backends/cpu/vec_loops.h"
#include "anatomy/backends/cpu/vec_math_f64.h"

namespace anatomy::cpu {
namespace {

template <VecFn F>
[[gnu::always_inline]] inline double apply(double x, VecArgs64 args = {}) {
  if constexpr (F == VecFn::Softplus) {
    // log(1 + e^(beta x)) / beta, and x itself above the threshold (PyTorch's softplus).
    const double y = x * args.beta;
    const double soft = vec64::log1p(vec64::exp(y)) / args.beta;
    return y > args.threshold ? x : soft;
  } else if constexpr (F == VecFn::Exp) return vec64::exp(x);
  else if constexpr (F == VecFn::Log) return vec64::log(x);
  else if constexpr (F == VecFn::Exp2) return vec64::exp2(x);
  else if constexpr (F == VecFn::Log2) return vec64::log2(x);
  else if constexpr (F == VecFn::Expm1) return vec64::expm1(x);
  else if constexpr (F == VecFn::Log1p) return vec64::log1p(x);
  else if constexpr (F == VecFn::Sigmoid) return vec64::sigmoid(x);
  else if constexpr (F == VecFn::Silu) return vec64::silu(x);
  else if constexpr (F == VecFn::Tanh) return vec64::tanh(x);
  else if constexpr (F == VecFn::Erf) return vec64::erf(x);
  else if constexpr (F == VecFn::Gelu) return vec64::gelu(x);
  else if constexpr (F == VecFn::GeluTanh) return vec64::gelu_tanh(x);
  else if constexpr (F == VecFn::Sin) return vec64::sin(x);
  else if constexpr (F == VecFn::Cos) return vec64::cos(x);
  else return vec64::tan(x);
}

// The C library's value; sigmoid, silu, gelu and gelu's tanh form, which it lacks, are
// vec_math_f64.h's in every copy (a plain 1 / (1 + e^-x) loses the tail below x = -709, where e^-x overflows, and
// x erfc(-x / sqrt 2) / 2 with x / sqrt 2 rounded is 1700 ulp off at x = -37).
template <VecFn F>
double libm(double x, VecArgs64 args) {
  if constexpr (F == VecFn::Softplus) {
    const double y = x * args.beta;
    return y > args.threshold ? x : std::log1p(std::exp(y)) / args.beta;
  } else if constexpr (F == VecFn::Exp) return std::exp(x);
  else if constexpr (F == VecFn::Log) return std::log(x);
  else if constexpr (F == VecFn::Exp2) return std::exp2(x);
  else if constexpr (F == VecFn::Log2) return std::log2(x);
  else if constexpr (F == VecFn::Expm1) return std::expm1(x);
  else if constexpr (F == VecFn::Log1p) return std::log1p(x);
  else if constexpr (F == VecFn::Sigmoid || F == VecFn::Silu || F == VecFn::Gelu || F == VecFn::GeluTanh) {
    return apply<F>(x);
  } else if constexpr (F == VecFn::Tanh) return std::tanh(x);
  else if constexpr (F == VecFn::Erf) return std::erf(x);
  else if constexpr (F == VecFn::Sin) return std::sin(x);
  else if constexpr (F == VecFn::Cos) return std::cos(x);
  else return std::tan(x);
}

// apply<F> and libm<F> as function objects for prefetching_loop (Note [Prefetching the
// transcendental loops]).
template <VecFn F>
struct Apply {
  VecArgs64 args;
  [[gnu::always_inline]] double operator()(double x) const { return apply<F>(x, args); }
};
template <VecFn F>
struct Libm {
  VecArgs64 args;
  double operator()(double x) const { return libm<F>(x, args); }
};

template <VecFn F>
void loop_baseline(const double* in, double* out, int64_t n, VecArgs64 args) {
  prefetching_loop(in, out, n, Libm<F>{args});
}

constexpr bool is_trig(VecFn f) { return f == VecFn::Sin || f == VecFn::Cos || f == VecFn::Tan; }

#if defined(__x86_64__)
// sin, cos and tan reduce their argument only up to vec64::kTrigMax: a chunk holding a larger
// argument (or inf, or NaN) runs this scalar loop, which calls the C library for those elements
// (each element is read before its output is written, so in place is fine). The scan that
// decides is vectorized, as for fp32 (vec_loops.cpp).
template <VecFn F>
[[gnu::noinline]] void trig_loop_with_large_arguments(const double* in, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = in[i];
    out[i] = std::fabs(x) <= vec64::kTrigMax ? apply<F>(x) : libm<F>(x, {});
  }
}

template <VecFn F>
[[gnu::always_inline]] inline bool has_large_argument(const double* in, int64_t n) {
  if constexpr (is_trig(F)) {
    uint64_t any = 0;
    for (int64_t i = 0; i < n; ++i) any |= static_cast<uint64_t>(!(std::fabs(in[i]) <= vec64::kTrigMax));
    return any != 0;
  }
  return false;
}

template <VecFn F>
[[gnu::target("avx2,fma")]] void loop_avx2(const double* in, double* out, int64_t n, VecArgs64 args) {
  if (has_large_argument<F>(in, n)) return trig_loop_with_large_arguments<F>(in, out, n);
  prefetching_loop(in, out, n, Apply<F>{args});
}
template <VecFn F>
[[gnu::target("avx512f,prefer-vector-width=512")]] void loop_avx512(const double* in, double* out, int64_t n,
                                                                    VecArgs64 args) {
  if (has_large_argument<F>(in, n)) return trig_loop_with_large_arguments<F>(in, out, n);
  prefetching_loop(in, out, n, Apply<F>{args});
}
#endif

template <VecFn F>
struct Baseline {
  static constexpr VecLoop64 loop = &loop_baseline<F>;
};
#if defined(__x86_64__)
template <VecFn F>
struct Avx2 {
  static constexpr VecLoop64 loop = &loop_avx2<F>;
};
template <VecFn F>
struct Avx512 {
  static constexpr VecLoop64 loop = &loop_avx512<F>;
};
#endif

}  // namespace

VecLoop64 vec_loop64_baseline(VecFn fn) { return pick_loop<VecLoop64, Baseline>(fn); }

VecLoop64 vec_loop64_avx2(VecFn fn) {
#if defined(__x86_64__)
  if (cpu_has_avx2_fma()) return pick_loop<VecLoop64, Avx2>(fn);
#endif
  (void)fn;
  return nullptr;
}

VecLoop64 vec_loop64_avx512(VecFn fn) {
#if defined(__x86_64__)
  if (cpu_has_avx512f()) return pick_loop<VecLoop64, Avx512>(fn);
#endif
  (void)fn;
  return nullptr;
}

VecLoop64 vec_loop64(VecFn fn) {
  if (const VecLoop64 avx512 = vec_loop64_avx512(fn)) return avx512;
  if (const VecLoop64 avx2 = vec_loop64_avx2(fn)) return avx2;
  return vec_loop64_baseline(fn);
}

}  // namespace anatomy::cpu
