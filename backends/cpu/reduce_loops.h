// The CPU reduction engine shared by every reduction kernel: given a dense [P, N, M] input
// (core/reduction_plan.h) and an Op, produces one accumulator per output and hands it to
// op.write(output_offset, acc).
//
// An Op says how to accumulate: one of the functors every backend shares, with where its results
// go (dispatch/ops/reduce_functors.h: Store, StoreValueIndex):
//   using acc_t = ...;
//   acc_t identity() const;                       // the value of an empty reduction
//   acc_t step(acc_t a, T x, int64_t i) const;    // fold element x, at reduced index i, into a
//   acc_t combine(acc_t a, acc_t b) const;        // merge two partial results
//   void write(int64_t out, acc_t a) const;       // store the result of output `out`
//
// Note [Cascade summation]
// Accumulating n values into one float loses about n * eps; summing pairwise loses log(n) * eps.
// Contiguous runs ("inner" reductions, M == 1) are cut into blocks of kBlock values, each folded
// into 16 independent accumulators (which the compiler keeps in vector registers) and those
// combined pairwise; blocks are combined pairwise, recursively. Long runs are cut into chunks of
// kChunk values reduced in parallel, whose partials are again combined pairwise in a fixed order:
// the result does not depend on the thread count. "Outer" reductions (M > 1) accumulate rows
// element-wise over a tile of columns (vectorized across columns), 16 rows at a time, and combine
// those partial rows pairwise. Every Op goes through this structure; for max, argmax, any... it
// is simply a parallel reduction tree.
#pragma once

#include <algorithm>
#include <memory>
#include <type_traits>

#include "anatomy/backends/cpu/sum_cascade.h"
#include "anatomy/core/parallel.h"
#include "anatomy/dispatch/ops/reduce_functors.h"
#include "anatomy/dispatch/ops/reduction_rules.h"

namespace anatomy::cpu {

inline constexpr int64_t kLanes = 16;
inline constexpr int64_t kBlock = 2048;
inline constexpr int64_t kChunk = 65536;  // a multiple of kBlock
inline constexpr int64_t kRowBlock = 16;
inline constexpr int64_t kTile = 1024;  // most columns per outer-reduction work item (4 KiB of fp32)

// Whether Op sums T in T itself (fp32 or fp64 sum and mean): sum_cascade.h's copies of the
// cascade take it.
template <typename T, typename Op>
inline constexpr bool kFloatingSum =
    (std::is_same_v<T, float> ||
     std::is_same_v<T, double>)&&std::is_base_of_v<reduction::SumFn<T>, Op>&& std::is_same_v<typename Op::acc_t, T>;

// Reduces x[0, n) (contiguous) whose first element has reduced index `base`.
template <typename T, typename Op>
typename Op::acc_t reduce_block(const T* x, int64_t n, int64_t base, const Op& op) {
  using A = typename Op::acc_t;
  A acc[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) acc[j] = op.identity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) acc[j] = op.step(acc[j], x[i + j], base + i + j);
  }
  for (int64_t j = 0; i + j < n; ++j) acc[j] = op.step(acc[j], x[i + j], base + i + j);
  for (int64_t w = kLanes / 2; w > 0; w /= 2) {
    for (int64_t j = 0; j < w; ++j) acc[j] = op.combine(acc[j], acc[j + w]);
  }
  return acc[0];
}

template <typename T, typename Op>
typename Op::acc_t reduce_cascade(const T* x, int64_t n, int64_t base, const Op& op) {
  static_assert(kLanes == kSumLanes && kBlock == kSumBlock);
  if constexpr (kFloatingSum<T, Op>) return sum_cascade(x, n);  // the same sums, in wider registers
  if (n <= kBlock) return reduce_block(x, n, base, op);
  // Split at a block boundary near the middle.
  const int64_t half = (n / 2 + kBlock - 1) / kBlock * kBlock;
  return op.combine(reduce_cascade(x, half, base, op), reduce_cascade(x + half, n - half, base + half, op));
}

// (Buffers of accumulators are plain arrays: a std::vector<bool> would pack them into bits.)
template <typename Op>
typename Op::acc_t combine_pairwise(const typename Op::acc_t* v, int64_t lo, int64_t hi, const Op& op) {
  if (hi - lo == 1) return v[lo];
  const int64_t mid = lo + (hi - lo) / 2;
  return op.combine(combine_pairwise(v, lo, mid, op), combine_pairwise(v, mid, hi, op));
}

// One contiguous run: chunks in parallel (when not already inside a parallel region), then
// their partials pairwise in order.
template <typename T, typename Op>
typename Op::acc_t reduce_run(const T* x, int64_t n, const Op& op) {
  if (n <= kChunk) return reduce_cascade(x, n, 0, op);
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::unique_ptr<typename Op::acc_t[]> partial(new typename Op::acc_t[chunks]);
  parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t lo = c * kChunk, len = std::min(kChunk, n - lo);
      partial[c] = reduce_cascade(x + lo, len, lo, op);
    }
  });
  return combine_pairwise(partial.get(), 0, chunks, op);
}

// Rows [r0, r1) of a [N, M] block, columns [0, w) of the tile at x: into out[0, w).
// scratch holds one row of w accumulators per recursion level.
template <typename T, typename Op>
void reduce_rows(const T* x, int64_t m, int64_t w, int64_t r0, int64_t r1, typename Op::acc_t* out,
                 typename Op::acc_t* scratch, const Op& op) {
  if (r1 - r0 <= kRowBlock) {
    for (int64_t j = 0; j < w; ++j) out[j] = op.identity();
    for (int64_t r = r0; r < r1; ++r) {
      const T* row = x + r * m;
      for (int64_t j = 0; j < w; ++j) out[j] = op.step(out[j], row[j], r);
    }
    return;
  }
  const int64_t mid = r0 + (r1 - r0) / 2;
  reduce_rows(x, m, w, r0, mid, out, scratch + w, op);
  reduce_rows(x, m, w, mid, r1, scratch, scratch + w, op);
  for (int64_t j = 0; j < w; ++j) out[j] = op.combine(out[j], scratch[j]);
}

// Runs the reduction of `in` (the plan's dense [P, N, M] input, of element type T).
template <typename T, typename Op>
void reduce_kernel(const ReductionPlan& plan, const Tensor& in, const Op& op) {
  using A = typename Op::acc_t;
  const int64_t P = plan.outer(), N = plan.reduced(), M = plan.inner();
  if (P * M == 0) return;
  if (N == 0) {
    for (int64_t o = 0; o < P * M; ++o) op.write(o, op.identity());
    return;
  }
  const T* x = static_cast<const T*>(in.data_ptr());
  if (M == 1) {
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / N);
    parallel_for(0, P, grain, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) op.write(p, reduce_run(x + p * N, N, op));
    });
    return;
  }
  // Wide tiles read whole pages per row; narrower ones when there would be too few for the threads.
  int64_t tile = kTile;
  while (tile > 128 && P * ((M + tile - 1) / tile) < 2 * get_num_threads()) tile /= 2;
  const int64_t tiles = (M + tile - 1) / tile;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (N * std::min(M, tile)));
  parallel_for(0, P * tiles, grain, [&](int64_t b, int64_t e) {
    std::unique_ptr<A[]> buf(new A[tile * 66]);
    for (int64_t item = b; item < e; ++item) {
      const int64_t p = item / tiles, m0 = (item % tiles) * tile, w = std::min(tile, M - m0);
      reduce_rows(x + p * N * M + m0, M, w, 0, N, buf.get(), buf.get() + tile, op);
      for (int64_t j = 0; j < w; ++j) op.write(p * M + m0 + j, buf[j]);
    }
  });
}

}  // namespace anatomy::cpu
