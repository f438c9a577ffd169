// backends/cpu/convert_loops.h: fp32 <-> bf16 in baseline, AVX2 and AVX-512 copies of one plain
// loop; fp32 <-> fp16 with F16C's conversions (AVX2 + F16C: 8 at a time; AVX-512: 16).
#include "anatomy/backends/cpu/convert_loops.h"

#include <bit>
#include <cstring>

#include "anatomy/backends/cpu/vec_loops.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace anatomy::cpu {
namespace {

// core/bfloat16.h's rounding without its early return for NaN, so that the loop is branch-free:
// round to nearest even on the bits, or the NaN's top bits with the quiet bit forced.
[[gnu::always_inline]] inline uint16_t to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t nan = (u >> 16) | 0x0040u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

template <typename Src, typename Dst, typename F>
[[gnu::always_inline]] inline void convert_all(const void* src, void* dst, int64_t n, F f) {
  const Src* in = static_cast<const Src*>(src);
  Dst* out = static_cast<Dst*>(dst);
  for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

struct ToBf16 {
  [[gnu::always_inline]] uint16_t operator()(float f) const { return to_bf16(f); }
};
struct FromBf16 {
  [[gnu::always_inline]] float operator()(uint16_t h) const { return std::bit_cast<float>(uint32_t{h} << 16); }
};

void f32_to_bf16_baseline(const void* src, void* dst, int64_t n) {
  convert_all<float, uint16_t>(src, dst, n, ToBf16{});
}
void bf16_to_f32_baseline(const void* src, void* dst, int64_t n) {
  convert_all<uint16_t, float>(src, dst, n, FromBf16{});
}

#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void f32_to_bf16_avx2(const void* src, void* dst, int64_t n) {
  convert_all<float, uint16_t>(src, dst, n, ToBf16{});
}
[[gnu::target("avx2,fma")]] void bf16_to_f32_avx2(const void* src, void* dst, int64_t n) {
  convert_all<uint16_t, float>(src, dst, n, FromBf16{});
}
[[gnu::target("avx512f,avx512bw,prefer-vector-width=512")]] void f32_to_bf16_avx512(const void* src, void* dst,
                                                                                    int64_t n) {
  convert_all<float, uint16_t>(src, dst, n, ToBf16{});
}
[[gnu::target("avx512f,avx512bw,prefer-vector-width=512")]] void bf16_to_f32_avx512(const void* src, void* dst,
                                                                                    int64_t n) {
  convert_all<uint16_t, float>(src, dst, n, FromBf16{});
}

// fp16 through F16C: round to nearest even, as core/half.h rounds; the tails through the same
// instruction on a padded vector, so that every element gets the hardware's bits.
[[gnu::target("avx2,f16c")]] void f32_to_f16_f16c(const void* src, void* dst, int64_t n) {
  const float* in = static_cast<const float*>(src);
  uint16_t* out = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  if (i < n) {
    float tail[8] = {};
    uint16_t half[8];
    std::memcpy(tail, in + i, static_cast<size_t>(n - i) * sizeof(float));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(half),
                     _mm256_cvtps_ph(_mm256_loadu_ps(tail), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    std::memcpy(out + i, half, static_cast<size_t>(n - i) * sizeof(uint16_t));
  }
}
[[gnu::target("avx2,f16c")]] void f16_to_f32_f16c(const void* src, void* dst, int64_t n) {
  const uint16_t* in = static_cast<const uint16_t*>(src);
  float* out = static_cast<float*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  if (i < n) {
    uint16_t half[8] = {};
    float wide[8];
    std::memcpy(half, in + i, static_cast<size_t>(n - i) * sizeof(uint16_t));
    _mm256_storeu_ps(wide, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(half))));
    std::memcpy(out + i, wide, static_cast<size_t>(n - i) * sizeof(float));
  }
}
#endif

}  // namespace

ConvertLoop convert_loop(DType from, DType to) {
  if (from == DType::Float32 && to == DType::BFloat16) {
#if defined(__x86_64__)
    if (cpu_has_avx512bw()) return &f32_to_bf16_avx512;
    if (cpu_has_avx2_fma()) return &f32_to_bf16_avx2;
#endif
    return &f32_to_bf16_baseline;
  }
  if (from == DType::BFloat16 && to == DType::Float32) {
#if defined(__x86_64__)
    if (cpu_has_avx512bw()) return &bf16_to_f32_avx512;
    if (cpu_has_avx2_fma()) return &bf16_to_f32_avx2;
#endif
    return &bf16_to_f32_baseline;
  }
#if defined(__x86_64__)
  if (from == DType::Float32 && to == DType::Float16 && cpu_has_f16c()) return &f32_to_f16_f16c;
  if (from == DType::Float16 && to == DType::Float32 && cpu_has_f16c()) return &f16_to_f32_f16c;
#endif
  return nullptr;
}

}  // namespace anatomy::cpu
