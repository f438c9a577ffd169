// sum_cascade.h's copies. Plain additions only (no -ffast-math, no contraction to matter): the
// compiler vectorizes the lanes loop across the accumulators without reordering any sum.
#include "anatomy/backends/cpu/sum_cascade.h"

#include "anatomy/backends/cpu/vec_loops.h"

namespace anatomy::cpu {
namespace {

template <typename T>
[[gnu::always_inline]] inline T sum_lanes(const T* x, int64_t n) {
  T acc[kSumLanes];
  for (int64_t j = 0; j < kSumLanes; ++j) acc[j] = T(0);
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    for (int64_t j = 0; j < kSumLanes; ++j) acc[j] += x[i + j];
  }
  for (int64_t j = 0; i + j < n; ++j) acc[j] += x[i + j];
  for (int64_t w = kSumLanes / 2; w > 0; w /= 2) {
    for (int64_t j = 0; j < w; ++j) acc[j] += acc[j + w];
  }
  return acc[0];
}

// The cascade over blocks: split at a block boundary near the middle, recursively (each copy
// calls itself, so the whole cascade of a chunk runs in that copy's instructions).
template <typename T>
T sum_baseline(const T* x, int64_t n) {
  if (n <= kSumBlock) return sum_lanes(x, n);
  const int64_t half = (n / 2 + kSumBlock - 1) / kSumBlock * kSumBlock;
  return sum_baseline(x, half) + sum_baseline(x + half, n - half);
}

#if defined(__x86_64__)
template <typename T>
[[gnu::target("avx2")]] T sum_avx2(const T* x, int64_t n) {
  if (n <= kSumBlock) return sum_lanes(x, n);
  const int64_t half = (n / 2 + kSumBlock - 1) / kSumBlock * kSumBlock;
  return sum_avx2(x, half) + sum_avx2(x + half, n - half);
}
template <typename T>
[[gnu::target("avx512f,prefer-vector-width=512")]] T sum_avx512(const T* x, int64_t n) {
  if (n <= kSumBlock) return sum_lanes(x, n);
  const int64_t half = (n / 2 + kSumBlock - 1) / kSumBlock * kSumBlock;
  return sum_avx512(x, half) + sum_avx512(x + half, n - half);
}
#endif

SumCascadeCopies widest() {
  if (const SumCascadeCopies c = sum_cascade_avx512(); c.f32 != nullptr) return c;
  if (const SumCascadeCopies c = sum_cascade_avx2(); c.f32 != nullptr) return c;
  return sum_cascade_baseline();
}

const SumCascadeCopies& chosen() {
  static const SumCascadeCopies copies = widest();
  return copies;
}

}  // namespace

SumCascadeCopies sum_cascade_baseline() { return {&sum_baseline<float>, &sum_baseline<double>}; }

SumCascadeCopies sum_cascade_avx2() {
#if defined(__x86_64__)
  if (cpu_has_avx2_fma()) return {&sum_avx2<float>, &sum_avx2<double>};
#endif
  return {nullptr, nullptr};
}

SumCascadeCopies sum_cascade_avx512() {
#if defined(__x86_64__)
  if (cpu_has_avx512f()) return {&sum_avx512<float>, &sum_avx512<double>};
#endif
  return {nullptr, nullptr};
}

float sum_cascade(const float* x, int64_t n) { return chosen().f32(x, n); }
double sum_cascade(const double* x, int64_t n) { return chosen().f64(x, n); }

}  // namespace anatomy::cpu
