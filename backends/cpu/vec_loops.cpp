// backends/cpu/vec_loops.h: each function's loop instantiated for the baseline, AVX2 with FMA and
// AVX-512. This file is compiled with -ffp-contract=fast (CMakeLists.txt): in the two wide copies
// every a * b + c is one FMA, rounded once; the baseline (SSE2) has no FMA. So the wide copies'
// results may differ from the baseline's by the last bit here and there; each copy is held to the
// same ulp bounds and special values (tests/core/test_vec_math.cpp).
#include "anatomy/backends/cpu/vec_loops.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "anatomy/backends/cpu/gelu_pieces.h"
#include "anatomy/backends/cpu/prefetch_loop.h"
#include "anatomy/backends/cpu/tanh_pieces.h"
#include "anatomy/backends/cpu/vec_math.h"

namespace anatomy::cpu {
namespace {

template <VecFn F>
[[gnu::always_inline]] inline float apply(float x, VecArgs args) {
  if constexpr (F == VecFn::Exp) return vec::exp(x);
  else if constexpr (F == VecFn::Expm1) return vec::expm1(x);
  else if constexpr (F == VecFn::Log) return vec::log(x);
  else if constexpr (F == VecFn::Log1p) return vec::log1p(x);
  else if constexpr (F == VecFn::Sigmoid) return vec::sigmoid(x);
  else if constexpr (F == VecFn::Silu) return vec::silu(x);
  else if constexpr (F == VecFn::Tanh) return vec::tanh(x);
  else if constexpr (F == VecFn::Erf) return vec::erf(x);
  else if constexpr (F == VecFn::Gelu) return vec::gelu(x);
  else if constexpr (F == VecFn::GeluTanh) return vec::gelu_tanh(x);
  else if constexpr (F == VecFn::Sin) return vec::sin(x);
  else if constexpr (F == VecFn::Cos) return vec::cos(x);
  else if constexpr (F == VecFn::Tan) return vec::tan(x);
  else if constexpr (F == VecFn::Exp2) return vec::exp2(x);
  else if constexpr (F == VecFn::Log2) return vec::log2(x);
  else {
    // PyTorch's rule: above the threshold log(1 + e^(beta x)) / beta is x to working precision.
    static_assert(F == VecFn::Softplus);
    const float y = x * args.beta;
    const float soft = vec::log1p_exp(y) / args.beta;
    return y > args.threshold ? x : soft;
  }
}

constexpr bool is_trig(VecFn f) { return f == VecFn::Sin || f == VecFn::Cos || f == VecFn::Tan; }

// sin, cos and tan reduce their argument only up to vec::kTrigMax; beyond it (and for inf and
// NaN) the C library's value, whose reduction of a large argument is exact. A chunk holding such
// an element runs this scalar loop instead of the vector one (each element is read before its
// output is written, so in place is fine); the scan that decides is vectorized, so a chunk
// without one pays only a pass over data in the cache.
template <VecFn F>
[[gnu::noinline]] void trig_loop_with_large_arguments(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i];
    if (vec::abs(x) <= vec::kTrigMax) out[i] = apply<F>(x, {});
    else if constexpr (F == VecFn::Sin) out[i] = std::sin(x);
    else if constexpr (F == VecFn::Cos) out[i] = std::cos(x);
    else out[i] = std::tan(x);
  }
}

template <VecFn F>
[[gnu::always_inline]] inline bool has_large_argument(const float* in, int64_t n) {
  if constexpr (is_trig(F)) {
    uint32_t any = 0;
    for (int64_t i = 0; i < n; ++i) any |= static_cast<uint32_t>(!(vec::abs(in[i]) <= vec::kTrigMax));
    return any != 0;
  }
  return false;
}

// apply<F> as a function object for prefetching_loop.
template <VecFn F>
struct Apply {
  VecArgs args;
  [[gnu::always_inline]] float operator()(float x) const { return apply<F>(x, args); }
};

// The functions' fast forms for prefetching_loop: the same values, without the clamps and the
// subnormal tails, over a block whose arguments all lie in [kLo, kHi]. exp, sigmoid and silu
// 10-25% fewer operations, gelu about 20% (docs/perf.md "Prefetching the transcendental loops").
template <VecFn F>
struct FastForm {
  using type = NoFastForm;
};
template <>
struct FastForm<VecFn::Exp> {
  struct type {
    static constexpr float kLo = -87.0f, kHi = 88.0f;  // e^x normal
    [[gnu::always_inline]] float operator()(float x) const { return vec::exp_normal(x); }
  };
};
template <>
struct FastForm<VecFn::Sigmoid> {
  struct type {
    static constexpr float kLo = -87.0f, kHi = 87.0f;
    [[gnu::always_inline]] float operator()(float x) const { return vec::sigmoid<true>(x); }
  };
};
template <>
struct FastForm<VecFn::Silu> {
  struct type {
    static constexpr float kLo = -87.0f, kHi = 87.0f;
    [[gnu::always_inline]] float operator()(float x) const { return vec::silu<true>(x); }
  };
};
template <>
struct FastForm<VecFn::Gelu> {
  struct type {
    static constexpr float kLo = -13.0f, kHi = 13.0f;
    [[gnu::always_inline]] float operator()(float x) const { return vec::gelu<true>(x); }
  };
};
template <>
struct FastForm<VecFn::GeluTanh> {
  struct type {
    static constexpr float kLo = -9.0f, kHi = 9.0f;
    [[gnu::always_inline]] float operator()(float x) const { return vec::gelu_tanh<true>(x); }
  };
};
template <VecFn F>
using FastFormOf = typename FastForm<F>::type;

// Each copy: the trig functions' scan for large arguments, then the loop with its prefetches
// (Note [Prefetching the transcendental loops]).
template <VecFn F>
void loop_baseline(const float* in, float* out, int64_t n, VecArgs args) {
  if (has_large_argument<F>(in, n)) return trig_loop_with_large_arguments<F>(in, out, n);
  prefetching_loop(in, out, n, Apply<F>{args}, FastFormOf<F>{});
}

#if defined(__x86_64__)
template <VecFn F>
[[gnu::target("avx2,fma")]] void loop_avx2(const float* in, float* out, int64_t n, VecArgs args) {
  if (has_large_argument<F>(in, n)) return trig_loop_with_large_arguments<F>(in, out, n);
  prefetching_loop(in, out, n, Apply<F>{args}, FastFormOf<F>{});
}
// The AVX-512 copy's fast forms: the others', but gelu and tanh by polynomial pieces in registers,
// every element (Note [gelu by polynomial pieces], gelu_pieces.h). A call per block of 64 values, not
// inlined: GCC will not inline an AVX-512 function into prefetching_loop, compiled for any target
// until its caller's is known.
struct GeluPiecesAvx512 {
  [[gnu::target("avx512f,prefer-vector-width=512")]] void block(const float* in, float* out) const {
    vec::gelu_pieces_avx512(in, out);
  }
};
// tanh likewise (Note [tanh by polynomial pieces], tanh_pieces.h).
struct TanhPiecesAvx512 {
  [[gnu::target("avx512f,prefer-vector-width=512")]] void block(const float* in, float* out) const {
    vec::tanh_pieces_avx512(in, out);
  }
};
template <VecFn F>
struct FastFormAvx512 {
  using type = FastFormOf<F>;
};
template <>
struct FastFormAvx512<VecFn::Gelu> {
  using type = GeluPiecesAvx512;
};
template <>
struct FastFormAvx512<VecFn::Tanh> {
  using type = TanhPiecesAvx512;
};
// 16 lanes: the loops are compute-bound over many cores (docs/perf.md). AVX-512F has FMA.
template <VecFn F>
[[gnu::target("avx512f,prefer-vector-width=512")]] void loop_avx512(const float* in, float* out, int64_t n,
                                                                    VecArgs args) {
  if (has_large_argument<F>(in, n)) return trig_loop_with_large_arguments<F>(in, out, n);
  prefetching_loop(in, out, n, Apply<F>{args}, typename FastFormAvx512<F>::type{});
}
#endif

template <VecFn F>
struct Baseline {
  static constexpr VecLoop loop = &loop_baseline<F>;
};
#if defined(__x86_64__)
template <VecFn F>
struct Avx2 {
  static constexpr VecLoop loop = &loop_avx2<F>;
};
template <VecFn F>
struct Avx512 {
  static constexpr VecLoop loop = &loop_avx512<F>;
};
#endif

}  // namespace

#if defined(__x86_64__)
namespace {

// The widest copies the loops may take. ANATOMY_CPU_CAPABILITY=avx2 keeps them off AVX-512 and
// =default on the baseline, as PyTorch's ATEN_CPU_CAPABILITY does: to compare the copies on one
// machine, or to keep a host's cores off AVX-512's lower clocks. Unset or any other value: the
// widest the CPU has (a value that is not a capability is passed over, as ANATOMY_NUM_THREADS's).
enum class Capability { Baseline, Avx2, Avx512 };
Capability capability_cap() {
  static const Capability cap = [] {
    const char* env = std::getenv("ANATOMY_CPU_CAPABILITY");
    if (env != nullptr && std::strcmp(env, "default") == 0) return Capability::Baseline;
    if (env != nullptr && std::strcmp(env, "avx2") == 0) return Capability::Avx2;
    return Capability::Avx512;
  }();
  return cap;
}

}  // namespace

// __builtin_cpu_init first: this may run before libgcc's constructor has filled the CPU model
// (an operator called from another library's static initializer).
#define ANATOMY_CPU_HAS(feature) (__builtin_cpu_init(), __builtin_cpu_supports(feature))
bool cpu_has_avx2_fma() {
  static const bool has = capability_cap() >= Capability::Avx2 && ANATOMY_CPU_HAS("avx2") && ANATOMY_CPU_HAS("fma");
  return has;
}
bool cpu_has_avx512f() {
  static const bool has = capability_cap() >= Capability::Avx512 && ANATOMY_CPU_HAS("avx512f");
  return has;
}
bool cpu_has_f16c() {
  static const bool has = ANATOMY_CPU_HAS("f16c") && cpu_has_avx2_fma();
  return has;
}
bool cpu_has_avx512bw() {
  static const bool has = ANATOMY_CPU_HAS("avx512bw") && cpu_has_avx512f();
  return has;
}
#undef ANATOMY_CPU_HAS
#else
bool cpu_has_avx2_fma() { return false; }
bool cpu_has_avx512f() { return false; }
bool cpu_has_f16c() { return false; }
bool cpu_has_avx512bw() { return false; }
#endif

VecLoop vec_loop_baseline(VecFn fn) { return pick_loop<VecLoop, Baseline>(fn); }

VecLoop vec_loop_avx2(VecFn fn) {
#if defined(__x86_64__)
  if (cpu_has_avx2_fma()) return pick_loop<VecLoop, Avx2>(fn);
#endif
  (void)fn;
  return nullptr;
}

VecLoop vec_loop_avx512(VecFn fn) {
#if defined(__x86_64__)
  if (cpu_has_avx512f()) return pick_loop<VecLoop, Avx512>(fn);
#endif
  (void)fn;
  return nullptr;
}

VecLoop vec_loop(VecFn fn) {
  if (const VecLoop avx512 = vec_loop_avx512(fn)) return avx512;
  if (const VecLoop avx2 = vec_loop_avx2(fn)) return avx2;
  return vec_loop_baseline(fn);
}

}  // namespace anatomy::cpu
