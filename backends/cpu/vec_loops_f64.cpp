// backends/cpu/vec_loops.h's fp64 loops: exp and log, compiled for the baseline (the C library's
// functions), AVX2 with FMA and AVX-512 (vec_math_f64.h's). Compiled with vec_loops.cpp's flags
// (CMakeLists.txt): -fno-trapping-math lets GCC compute both sides of a select, and
// -ffp-contract=fast makes each a * b + c one FMA in the wide copies.
#include <cmath>

#include "anatomy/backends/cpu/vec_loops.h"
#include "anatomy/backends/cpu/vec_math_f64.h"

namespace anatomy::cpu {
namespace {

void baseline_exp(const double* in, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
}
void baseline_log(const double* in, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::log(in[i]);
}

#if defined(__x86_64__)
template <VecFn64 F>
[[gnu::always_inline]] inline double apply(double x) {
  if constexpr (F == VecFn64::Exp) return vec64::exp(x);
  else return vec64::log(x);
}
template <VecFn64 F>
[[gnu::target("avx2,fma")]] void loop_avx2(const double* in, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = apply<F>(in[i]);
}
template <VecFn64 F>
[[gnu::target("avx512f,prefer-vector-width=512")]] void loop_avx512(const double* in, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = apply<F>(in[i]);
}
#endif

}  // namespace

VecLoop64 vec_loop64_baseline(VecFn64 fn) { return fn == VecFn64::Exp ? &baseline_exp : &baseline_log; }

VecLoop64 vec_loop64_avx2(VecFn64 fn) {
#if defined(__x86_64__)
  if (cpu_has_avx2_fma()) return fn == VecFn64::Exp ? &loop_avx2<VecFn64::Exp> : &loop_avx2<VecFn64::Log>;
#endif
  (void)fn;
  return nullptr;
}

VecLoop64 vec_loop64_avx512(VecFn64 fn) {
#if defined(__x86_64__)
  if (cpu_has_avx512f()) return fn == VecFn64::Exp ? &loop_avx512<VecFn64::Exp> : &loop_avx512<VecFn64::Log>;
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
