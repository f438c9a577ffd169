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
// Every function, for the tests that go through them all (the fp64 loops have each one too).
inline constexpr VecFn kAllVecFn[] = {
    VecFn::Exp,  VecFn::Expm1,    VecFn::Log,      VecFn::Log1p, VecFn::Sigmoid, VecFn::Silu, VecFn::Tanh, VecFn::Erf,
    VecFn::Gelu, VecFn::GeluTanh, VecFn::Softplus, VecFn::Sin,   VecFn::Cos,     VecFn::Tan,  VecFn::Exp2, VecFn::Log2};

// Pick<F>::loop for the function fn names: the one switch over VecFn that turns a run-time
// function into a compiled loop, for every copy of the fp32 and fp64 loops. Loop is spelled out
// (not deduced from Pick) so that it is part of the instantiation's name: the fp32 and fp64 files
// each pass their own Baseline, Avx2 and Avx512, and an unoptimized build keeps the instantiations
// as out-of-line functions, which must not share a name.
template <typename Loop, template <VecFn> class Pick>
Loop pick_loop(VecFn fn) {
  switch (fn) {
    case VecFn::Exp:
      return Pick<VecFn::Exp>::loop;
    case VecFn::Expm1:
      return Pick<VecFn::Expm1>::loop;
    case VecFn::Log:
      return Pick<VecFn::Log>::loop;
    case VecFn::Log1p:
      return Pick<VecFn::Log1p>::loop;
    case VecFn::Sigmoid:
      return Pick<VecFn::Sigmoid>::loop;
    case VecFn::Silu:
      return Pick<VecFn::Silu>::loop;
    case VecFn::Tanh:
      return Pick<VecFn::Tanh>::loop;
    case VecFn::Erf:
      return Pick<VecFn::Erf>::loop;
    case VecFn::Gelu:
      return Pick<VecFn::Gelu>::loop;
    case VecFn::GeluTanh:
      return Pick<VecFn::GeluTanh>::loop;
    case VecFn::Softplus:
      return Pick<VecFn::Softplus>::loop;
    case VecFn::Sin:
      return Pick<VecFn::Sin>::loop;
    case VecFn::Cos:
      return Pick<VecFn::Cos>::loop;
    case VecFn::Tan:
      return Pick<VecFn::Tan>::loop;
    case VecFn::Exp2:
      return Pick<VecFn::Exp2>::loop;
    case VecFn::Log2:
      return Pick<VecFn::Log2>::loop;
  }
  return nullptr;
}

// softplus's parameters (unused by the others).
struct VecArgs {
  float beta = 1, threshold = 20;
};

using VecLoop = void (*)(const float* in, float* out, int64_t n, VecArgs args);

// Whether the CPU has AVX2 with FMA, and AVX-512F (false off x86-64): the wide copies of the
// fp32 and fp64 loops run only where these hold. Asked once. ANATOMY_CPU_CAPABILITY=avx2 (or
// =default) in the environment makes them false from AVX-512 (from AVX2) up, as PyTorch's
// ATEN_CPU_CAPABILITY does.
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

// fp64 (backends/cpu/vec_math_f64.h), every VecFn, contiguous in and out (vec_loops_f64.cpp). The
// AVX2 and AVX-512 copies run the vectorized functions; the baseline, without 64-bit integer
// lanes, the C library's (sigmoid, silu and the gelus, which it lacks, vec_math_f64.h's). sin, cos
// and tan beyond vec64::kTrigMax take the C library's value in every copy. VecArgs64: softplus's
// parameters, as VecArgs for the fp32 loops.
struct VecArgs64 {
  double beta = 1, threshold = 20;
};
using VecLoop64 = void (*)(const double* in, double* out, int64_t n, VecArgs64 args);
VecLoop64 vec_loop64_baseline(VecFn fn);
VecLoop64 vec_loop64_avx2(VecFn fn);    // nullptr without AVX2 + FMA
VecLoop64 vec_loop64_avx512(VecFn fn);  // nullptr without AVX-512F
VecLoop64 vec_loop64(VecFn fn);

}  // namespace anatomy::cpu
