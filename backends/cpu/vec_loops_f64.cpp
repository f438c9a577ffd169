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

template <VecFn64 F>
[[gnu::always_inline]] inline double apply(double x, VecArgs64 args = {}) {
  if constexpr (F == VecFn64::Softplus) {
    // log(1 + e^(beta x)) / beta, and x itself above the threshold (PyTorch's softplus).
    const double y = x * args.beta;
    const double soft = vec64::log1p(vec64::exp(y)) / args.beta;
    return y > args.threshold ? x : soft;
  } else if constexpr (F == VecFn64::Exp) return vec64::exp(x);
  else if constexpr (F == VecFn64::Log) return vec64::log(x);
  else if constexpr (F == VecFn64::Exp2) return vec64::exp2(x);
  else if constexpr (F == VecFn64::Log2) return vec64::log2(x);
  else if constexpr (F == VecFn64::Expm1) return vec64::expm1(x);
  else if constexpr (F == VecFn64::Log1p) return vec64::log1p(x);
  else if constexpr (F == VecFn64::Sigmoid) return vec64::sigmoid(x);
  else if constexpr (F == VecFn64::Silu) return vec64::silu(x);
  else if constexpr (F == VecFn64::Tanh) return vec64::tanh(x);
  else if constexpr (F == VecFn64::Erf) return vec64::erf(x);
  else if constexpr (F == VecFn64::Gelu) return vec64::gelu(x);
  else if constexpr (F == VecFn64::GeluTanh) return vec64::gelu_tanh(x);
  else if constexpr (F == VecFn64::Sin) return vec64::sin(x);
  else if constexpr (F == VecFn64::Cos) return vec64::cos(x);
  else return vec64::tan(x);
}

// The C library's value; sigmoid, silu, gelu and gelu's tanh form, which it lacks, are
// vec_math_f64.h's in every copy (a plain 1 / (1 + e^-x) loses the tail below x = -709, where e^-x overflows, and
// x erfc(-x / sqrt 2) / 2 with x / sqrt 2 rounded is 1700 ulp off at x = -37).
template <VecFn64 F>
double libm(double x, VecArgs64 args) {
  if constexpr (F == VecFn64::Softplus) {
    const double y = x * args.beta;
    return y > args.threshold ? x : std::log1p(std::exp(y)) / args.beta;
  } else if constexpr (F == VecFn64::Exp) return std::exp(x);
  else if constexpr (F == VecFn64::Log) return std::log(x);
  else if constexpr (F == VecFn64::Exp2) return std::exp2(x);
  else if constexpr (F == VecFn64::Log2) return std::log2(x);
  else if constexpr (F == VecFn64::Expm1) return std::expm1(x);
  else if constexpr (F == VecFn64::Log1p) return std::log1p(x);
  else if constexpr (F == VecFn64::Sigmoid || F == VecFn64::Silu || F == VecFn64::Gelu || F == VecFn64::GeluTanh) {
    return apply<F>(x);
  } else if constexpr (F == VecFn64::Tanh) return std::tanh(x);
  else if constexpr (F == VecFn64::Erf) return std::erf(x);
  else if constexpr (F == VecFn64::Sin) return std::sin(x);
  else if constexpr (F == VecFn64::Cos) return std::cos(x);
  else return std::tan(x);
}

// apply<F> and libm<F> as function objects for prefetching_loop (Note [Prefetching the
// transcendental loops]).
template <VecFn64 F>
struct Apply {
  VecArgs64 args;
  [[gnu::always_inline]] double operator()(double x) const { return apply<F>(x, args); }
};
template <VecFn64 F>
struct Libm {
  VecArgs64 args;
  double operator()(double x) const { return libm<F>(x, args); }
};

template <VecFn64 F>
void loop_baseline(const double* in, double* out, int64_t n, VecArgs64 args) {
  prefetching_loop(in, out, n, Libm<F>{args});
}

constexpr bool is_trig(VecFn64 f) { return f == VecFn64::Sin || f == VecFn64::Cos || f == VecFn64::Tan; }

#if defined(__x86_64__)
// sin, cos and tan reduce their argument only up to vec64::kTrigMax: a chunk holding a larger
// argument (or inf, or NaN) runs this scalar loop, which calls the C library for those elements
// (each element is read before its output is written, so in place is fine). The scan that
// decides is vectorized, as for fp32 (vec_loops.cpp).
template <VecFn64 F>
[[gnu::noinline]] void trig_loop_with_large_arguments(const double* in, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = in[i];
    out[i] = std::fabs(x) <= vec64::kTrigMax ? apply<F>(x) : libm<F>(x, {});
  }
}

template <VecFn64 F>
[[gnu::always_inline]] inline bool has_large_argument(const double* in, int64_t n) {
  if constexpr (is_trig(F)) {
    uint64_t any = 0;
    for (int64_t i = 0; i < n; ++i) any |= static_cast<uint64_t>(!(std::fabs(in[i]) <= vec64::kTrigMax));
    return any != 0;
  }
  return false;
}

template <VecFn64 F>
[[gnu::target("avx2,fma")]] void loop_avx2(const double* in, double* out, int64_t n, VecArgs64 args) {
  if (has_large_argument<F>(in, n)) return trig_loop_with_large_arguments<F>(in, out, n);
  prefetching_loop(in, out, n, Apply<F>{args});
}
template <VecFn64 F>
[[gnu::target("avx512f,prefer-vector-width=512")]] void loop_avx512(const double* in, double* out, int64_t n,
                                                                    VecArgs64 args) {
  if (has_large_argument<F>(in, n)) return trig_loop_with_large_arguments<F>(in, out, n);
  prefetching_loop(in, out, n, Apply<F>{args});
}
#endif

template <template <VecFn64> class Pick>
VecLoop64 pick(VecFn64 fn) {
  switch (fn) {
    case VecFn64::Exp:
      return Pick<VecFn64::Exp>::loop;
    case VecFn64::Log:
      return Pick<VecFn64::Log>::loop;
    case VecFn64::Exp2:
      return Pick<VecFn64::Exp2>::loop;
    case VecFn64::Log2:
      return Pick<VecFn64::Log2>::loop;
    case VecFn64::Expm1:
      return Pick<VecFn64::Expm1>::loop;
    case VecFn64::Log1p:
      return Pick<VecFn64::Log1p>::loop;
    case VecFn64::Sigmoid:
      return Pick<VecFn64::Sigmoid>::loop;
    case VecFn64::Silu:
      return Pick<VecFn64::Silu>::loop;
    case VecFn64::Tanh:
      return Pick<VecFn64::Tanh>::loop;
    case VecFn64::Erf:
      return Pick<VecFn64::Erf>::loop;
    case VecFn64::Gelu:
      return Pick<VecFn64::Gelu>::loop;
    case VecFn64::GeluTanh:
      return Pick<VecFn64::GeluTanh>::loop;
    case VecFn64::Softplus:
      return Pick<VecFn64::Softplus>::loop;
    case VecFn64::Sin:
      return Pick<VecFn64::Sin>::loop;
    case VecFn64::Cos:
      return Pick<VecFn64::Cos>::loop;
    case VecFn64::Tan:
      return Pick<VecFn64::Tan>::loop;
  }
  return nullptr;
}

template <VecFn64 F>
struct Baseline {
  static constexpr VecLoop64 loop = &loop_baseline<F>;
};
#if defined(__x86_64__)
template <VecFn64 F>
struct Avx2 {
  static constexpr VecLoop64 loop = &loop_avx2<F>;
};
template <VecFn64 F>
struct Avx512 {
  static constexpr VecLoop64 loop = &loop_avx512<F>;
};
#endif

}  // namespace

VecLoop64 vec_loop64_baseline(VecFn64 fn) { return pick<Baseline>(fn); }

VecLoop64 vec_loop64_avx2(VecFn64 fn) {
#if defined(__x86_64__)
  if (cpu_has_avx2_fma()) return pick<Avx2>(fn);
#endif
  (void)fn;
  return nullptr;
}

VecLoop64 vec_loop64_avx512(VecFn64 fn) {
#if defined(__x86_64__)
  if (cpu_has_avx512f()) return pick<Avx512>(fn);
#endif
  (void)fn;
  return nullptr;
}

VecLoop64 vec_loop64(VecFn64 fn) {
  if (const VecLoop64 avx512 = vec_loop64_avx512(fn)) return avx512;
  if (const VecLoop64 avx2 = vec_loop64_avx2(fn)) return avx2;
  return vec_loop64_baseline(fn);
}

}  // namespace anatomy::cpu
