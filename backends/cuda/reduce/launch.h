// The reduce room's launchers: the CUDA reduction kernels (reduce_sum.cu, reduce_stats.cu, reduce_minmax.cu,
// reduce_logical.cu), called by reduce_cuda.cpp with the reduction plan's dense [P, N, M] input
// (Note [Reduction plan], core/reduction_plan.h) and the geometry chosen here. Plain C++: the
// host computes the geometry (and so the size of the scratch buffer of a two-pass reduction)
// with the same function the kernels are launched by.
//
// Note [CUDA reduction paths]
//   M == 1, N <= kWarpRowMax   one warp per output row (rows grid-strided over the warps)
//   M == 1, N larger           one block of 256 threads per row; when there are too few rows to
//                              fill the GPU (the sum of everything: P = 1), `splits` blocks share
//                              a row, each reducing a chunk of it into a scratch slot, and a
//                              second kernel combines each row's slots in a fixed order
//   M > 1                      "columns": a block is 32 columns by 8 row lanes; each thread owns
//                              one column (loads coalesce across the warp), its 8 row lanes are
//                              combined through shared memory in a fixed order; when there are
//                              too few column tiles, `splits` blocks share a tile's rows and a
//                              second kernel combines their slots in a fixed order
//   Within a thread, values are folded in increasing index order; across threads, by warp
//   shuffles (__shfl_down_sync) and shared memory in a fixed tree. No atomics: the same input,
//   shape and device give bit-identical results every time.
//   Vector loads (`vec` > 1: sum and mean of a 16-byte aligned input): a row thread reads whole
//   16-byte vectors (thread t the vectors t, t + threads, ...; a row's last N % vec elements one
//   each by the first threads), and a columns thread owns vec adjacent columns, so a warp reads
//   512 bytes of a row at once; each column's values are still folded in row order.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

inline constexpr int kReduceThreads = 256;  // threads of every reduction block
inline constexpr int kReduceWarps = kReduceThreads / 32;
inline constexpr int kColumnTile = 32;                             // columns of a "columns" block (one warp wide)
inline constexpr int kColumnLanes = kReduceThreads / kColumnTile;  // its row lanes
inline constexpr int64_t kWarpRowMax = 1024;                       // rows up to this long: one warp each
inline constexpr size_t kMaxAccBytes = 32;  // the largest accumulator (var's: 24 bytes), one scratch slot

enum class ReducePath : int8_t { WarpPerRow, BlockPerRow, Columns };

struct ReduceGeometry {
  int64_t outer = 1, reduced = 1, inner = 1;  // P, N, M
  ReducePath path = ReducePath::WarpPerRow;
  int64_t splits = 1;  // blocks sharing one row or column tile (gridDim.y); 1: one pass
  int64_t chunk = 0;   // reduced indices each split covers (a multiple of vec on the row paths)
  int vec = 1;         // elements per load: 16 / sizeof(T) for vector loads, else 1
  unsigned grid_x = 1;
  // Scratch slots (of kMaxAccBytes) the first pass writes: one per output and split.
  int64_t scratch_slots() const { return splits > 1 ? outer * inner * splits : 0; }
};

// `sm_count`: the device's multiprocessors. Enough blocks are wanted to fill each 8 times over
// (8 blocks of 256 threads is a full SM); fewer outputs than that split their reduced range.
// `vec` > 1 asks for vector loads (the caller has checked alignment: vector_loads_allowed).
inline ReduceGeometry reduce_geometry(int64_t P, int64_t N, int64_t M, int sm_count, int vec = 1) {
  ReduceGeometry g;
  g.outer = P, g.reduced = N, g.inner = M, g.vec = vec;
  const int64_t target = std::max<int64_t>(1, int64_t{sm_count} * 8);
  auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  auto blocks = [](int64_t b) { return static_cast<unsigned>(std::clamp<int64_t>(b, 1, kMaxBlocks)); };
  // Splits of at least `min_chunk` indices, so each split's threads have work to overlap.
  auto split = [&](int64_t units, int64_t min_chunk) {
    int64_t s = units < target ? ceil_div(target, units) : 1;
    s = std::max<int64_t>(1, std::min({s, N / min_chunk, int64_t{65535}}));
    g.chunk = ceil_div(N, s);
    if (M == 1) g.chunk = ceil_div(g.chunk, vec) * vec;  // splits start on a vector
    g.splits = g.chunk > 0 ? ceil_div(N, g.chunk) : 1;   // no empty split
  };
  if (M == 1 && N <= kWarpRowMax) {
    g.path = ReducePath::WarpPerRow;
    g.chunk = N;
    g.grid_x = blocks(ceil_div(P, kReduceWarps));
  } else if (M == 1) {
    g.path = ReducePath::BlockPerRow;
    split(P, int64_t{kReduceThreads} * 16);
    g.grid_x = blocks(P);
  } else {
    g.path = ReducePath::Columns;
    const int64_t tiles = P * ceil_div(M, int64_t{kColumnTile} * vec);
    split(tiles, int64_t{kColumnLanes} * 16);
    g.grid_x = blocks(tiles);
  }
  return g;
}

// Whether sum and mean of a dense [P, N, M] input at `input` may use vector loads of `vec`
// elements: the input 16-byte aligned, and every row (M == 1) or every row of columns (M > 1)
// starting on a vector.
inline bool vector_loads_allowed(const void* input, int64_t P, int64_t N, int64_t M, int vec) {
  if (vec <= 1 || reinterpret_cast<uintptr_t>(input) % 16 != 0) return false;
  return M == 1 ? (P == 1 || N % vec == 0) : M % vec == 0;
}

// The tensors' memory: the dense [P, N, M] input, the results (output (p, m) at p * M + m) and
// the scratch of geometry.scratch_slots() slots (null when there are none).
struct ReduceBuffers {
  const void* input = nullptr;
  void* values = nullptr;   // null for argmax / argmin
  void* indices = nullptr;  // argmax / argmin's result, max.dim / min.dim's indices; else null
  void* scratch = nullptr;
};

// reduce_sum.cu: sum and mean (fp16/bf16/fp32 accumulate in fp32, integers and bool in int64
// with wrap-around), prod. `dtype` is the input's (already the operator's compute dtype) and the
// result's.
enum class SumReduceOp : int8_t { Sum, Mean, Prod };
void launch_reduce_sum(SumReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b,
                       cudaStream_t stream);

// reduce_stats.cu: var and std (Welford in fp64, `a` = correction), norm (`a` = p), logsumexp;
// floating dtypes only.
enum class StatsReduceOp : int8_t { Var, Std, Norm, LogSumExp };
void launch_reduce_stats(StatsReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b, double a,
                         cudaStream_t stream);

// reduce_minmax.cu: the largest or smallest value (NaN wins), with the index of its first
// occurrence in b.indices when that is set; every dtype.
enum class ExtremeReduceOp : int8_t { Max, Min };
void launch_reduce_extreme(ExtremeReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b,
                           cudaStream_t stream);

// reduce_logical.cu: any and all (bool results), count_nonzero (int64); every dtype.
enum class LogicalReduceOp : int8_t { Any, All, CountNonzero };
void launch_reduce_logical(LogicalReduceOp op, DType dtype, const ReduceGeometry& g, const ReduceBuffers& b,
                           cudaStream_t stream);

}  // namespace anatomy::cuda
