// The cascade sum of a contiguous run (Note [Cascade summation], reduce_loops.h) for fp32 and
// fp64, compiled for the x86-64 baseline (SSE2), AVX2 and AVX-512 and chosen once at run time.
// Every copy makes the same additions in the same order as reduce_cascade with SumFn (blocks of
// kBlock split at the middle block boundary; in a block kLanes accumulators, element i into
// accumulator i % kLanes, a tail, then the accumulators pairwise), so every copy gives the same
// bits; the wider ones hold the accumulators in fewer registers and run at memory speed on one
// thread, where the baseline's four 4-lane chains did not (docs/perf.md).
#pragma once

#include <cstdint>

namespace anatomy::cpu {

inline constexpr int64_t kSumLanes = 16;    // reduce_loops.h's kLanes
inline constexpr int64_t kSumBlock = 2048;  // and its kBlock

float sum_cascade(const float* x, int64_t n);
double sum_cascade(const double* x, int64_t n);

// Each copy, for the tests (null where the CPU lacks the instructions).
using SumCascadeF32 = float (*)(const float*, int64_t);
using SumCascadeF64 = double (*)(const double*, int64_t);
struct SumCascadeCopies {
  SumCascadeF32 f32;
  SumCascadeF64 f64;
};
SumCascadeCopies sum_cascade_baseline();
SumCascadeCopies sum_cascade_avx2();
SumCascadeCopies sum_cascade_avx512();

}  // namespace anatomy::cpu
