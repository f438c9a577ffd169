// The fp32 loops over backends/cpu/vec_math.h's functions: contiguous in, contiguous out (the
// same array for in-place forms), each compiled three times, for the x86-64 baseline (SSE2, 4
// lanes), AVX2 with FMA (8 lanes) and AVX-512 (16 lanes, FMA), the widest the CPU has chosen
// once at run time.
// The build has no -march flag, so without the other copies every machine would run 4 lanes.
#pragma once

#include <cstdint>

namespace anatomy::cpu {

enum class VecFn {
  Exp,
  Expm1,
  Log,
  Log1p,
  Sigmoid,
  Silu,
  Tanh,
  Erf,
  Gelu,
  GeluTanh,
  Softplus,
  Sin,
  Cos,
  Tan,
  Exp2,
  Log2
};

// softplus's parameters (unused by the others).
struct VecArgs {
  float beta = 1, threshold = 20;
};

using VecLoop = void (*)(const float* in, float* out, int64_t n, VecArgs args);

// Whether the CPU has AVX2 with FMA, and AVX-512F (false off x86-64): the wide copies of the
// fp32 and fp64 loops run only where these hold. Asked once.
bool cpu_has_avx2_fma();
bool cpu_has_avx512f();
// F16C (with AVX2 + FMA) and AVX-512BW (with AVX-512F): convert_loops.cpp's copies.
bool cpu_has_f16c();
bool cpu_has_avx512bw();

// The baseline loop: every x86-64 CPU (and the only one elsewhere).
VecLoop vec_loop_baseline(VecFn fn);
// The AVX2 + FMA loop, or nullptr where the CPU lacks either (or is not x86-64).
VecLoop vec_loop_avx2(VecFn fn);
// The AVX-512 loop, or nullptr where the CPU lacks AVX-512F (or is not x86-64).
VecLoop vec_loop_avx512(VecFn fn);
// The one kernels call: AVX-512, else AVX2, else the baseline.
VecLoop vec_loop(VecFn fn);

// fp64 (backends/cpu/vec_math_f64.h), contiguous in and out (vec_loops_f64.cpp). The AVX2 and
// AVX-512 copies run the vectorized functions; the baseline, without 64-bit integer lanes, the C
// library's (sigmoid, silu and the gelus, which it lacks, vec_math_f64.h's). sin, cos and tan beyond
// vec64::kTrigMax take the C library's value in every copy.
enum class VecFn64 {
  Exp,
  Log,
  Exp2,
  Log2,
  Expm1,
  Log1p,
  Sigmoid,
  Silu,
  Tanh,
  Erf,
  Gelu,
  GeluTanh,
  Softplus,
  Sin,
  Cos,
  Tan
};
inline constexpr VecFn64 kAllVecFn64[] = {VecFn64::Exp,      VecFn64::Log,   VecFn64::Exp2,    VecFn64::Log2,
                                          VecFn64::Expm1,    VecFn64::Log1p, VecFn64::Sigmoid, VecFn64::Silu,
                                          VecFn64::Tanh,     VecFn64::Erf,   VecFn64::Gelu,    VecFn64::GeluTanh,
                                          VecFn64::Softplus, VecFn64::Sin,   VecFn64::Cos,     VecFn64::Tan};
// softplus's arguments, as VecArgs for the fp32 loops.
struct VecArgs64 {
  double beta = 1, threshold = 20;
};
using VecLoop64 = void (*)(const double* in, double* out, int64_t n, VecArgs64 args);
VecLoop64 vec_loop64_baseline(VecFn64 fn);
VecLoop64 vec_loop64_avx2(VecFn64 fn);    // nullptr without AVX2 + FMA
VecLoop64 vec_loop64_avx512(VecFn64 fn);  // nullptr without AVX-512F
VecLoop64 vec_loop64(VecFn64 fn);

}  // namespace anatomy::cpu
