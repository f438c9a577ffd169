// CUDA layer_norm and rms_norm over a transposed fp16 or bf16 input within a quarter of L2 (rows 1
// element apart, their values a multiple of 16 bytes apart: c01 contiguity-bench's
// transposed_view) by statistics first, then a transposing write. Same formulas as norm.cu (Note
// [Two-pass statistics in fp32]).
//
// Note [Statistics, then a transposing write]
//   Read as it lies, the input is S (K x M, row-major), and each row of x is a column of S. The
//   tile kernel (norm_tile.cu) holds 8 columns of S whole in a block and writes them when their
//   statistics are known: one block per tile, every block loading, then reducing, then writing,
//   so the GPU's loads and stores never overlap, and the stores are 2 bytes a lane. Here three
//   kernels, each a plain streaming pattern over many blocks:
//   1. column_partials: a block takes 64 columns (128 bytes of each row of S) over a chunk of
//      kChunkRows rows, held in registers, and writes each column's chunk sum s_c and, about the
//      chunk's mean, the sum d_c of the deviations and m2_c of their squares (rms_norm: the sum
//      of squares only); a column's sums meet by shuffles within a warp, then across the warps
//      in a fixed order;
//   2. combine_partials: a thread per column adds the chunks in order: m = (sum of s_c) / K, then
//      the sums of x - m and (x - m)^2 of the two-pass formulas, shifted from each chunk's mean
//      to m exactly (d = sum of d_c + n_c (m_c - m), q = sum of m2_c + 2 (m_c - m) d_c +
//      n_c (m_c - m)^2), and writes mean, rstd and each column's scale;
//   3. transpose_normalize: 64 x 64 tiles through shared memory, 16-byte loads of S's rows and
//      16-byte stores of y's rows (8 consecutive lanes write one 128-byte line).
//   The input is read twice, the second time from L2 (the launch is taken only when S fits in a
//   quarter of it: slower than the tile kernel at 32 MiB on an H100, faster at 8 MiB). Each
//   kernel lets the next one launch early (Note [Programmatic dependent launch]); the write
//   kernel loads its tile before it waits, since no kernel of the chain writes S (the first
//   waited for S's producer before it let the others start).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/dependent_launch.cuh"
#include "anatomy/backends/cuda/norm/launch.h"
#include "anatomy/backends/cuda/norm/row_norm.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device_limits.h"

namespace anatomy::cuda {
namespace {

constexpr int kVec = 8;                  // 2-byte values in 16 bytes
constexpr int kGroupColumns = 8 * kVec;  // 64 columns of S: 128 bytes of each row
constexpr int kPartialThreads = 256;     // 8 column lanes x 32 row lanes
constexpr int kRowLanes = kPartialThreads / 8;
constexpr int kPartialWarps = kPartialThreads / 32;
constexpr int kChunkRows = 128;  // rows of S per block of column_partials
constexpr int kRowsPerThread = kChunkRows / kRowLanes;
constexpr int kCombineThreads = 128;
constexpr int kTile = 64;  // the write's tile: 64 rows of S x 64 columns
constexpr int kTileThreads = 256;
constexpr int kTilePitch = kTile + 2;  // elements; see transpose_normalize

// A chunk's sums for one column (rms_norm fills s only, with the sum of squares).
struct ChunkSums {
  float s, d, m2, unused;
};
// y = ((x - shift) - correction) * rstd for one column of S.
struct ColumnScale {
  float shift, correction, rstd, unused;
};

template <typename T>
struct TransposeArgs {
  NormKernelArgs<T> a;  // rows = M (columns of S), n = K (rows of S); x_col_stride: S's row pitch
  ChunkSums* partials;  // chunks x M
  ColumnScale* scales;  // M
  int chunks;
};

// Sums over the block's rows of each of its 64 columns: v[q] is this thread's part of column
// lane * kVec + q. The 4 row lanes of a warp meet by shuffles, then the warps' sums in warp order
// in red[slot]; thread t < kGroupColumns reads column t's total after the caller's barrier.
__device__ __forceinline__ void warp_column_sums(float (&v)[kVec], float (&red)[kPartialWarps][kGroupColumns]) {
  const int t = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int q = 0; q < kVec; ++q) {
    v[q] += __shfl_xor_sync(0xffffffffu, v[q], 8);
    v[q] += __shfl_xor_sync(0xffffffffu, v[q], 16);
  }
  if (t % 32 < 8) {
#pragma unroll
    for (int q = 0; q < kVec; ++q) red[t / 32][(t % 8) * kVec + q] = v[q];
  }
}

__device__ __forceinline__ float block_column_total(const float (&red)[kPartialWarps][kGroupColumns], int column) {
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < kPartialWarps; ++w) total += red[w][column];
  return total;
}

template <typename T, bool Rms>
__global__ void __launch_bounds__(kPartialThreads) column_partials(TransposeArgs<T> p) {
  wait_for_prior_kernel();
  release_next_kernel();
  const NormKernelArgs<T>& a = p.a;
  const int t = static_cast<int>(threadIdx.x), lane = t % 8, rr = t / 8;
  const int64_t g0 = static_cast<int64_t>(blockIdx.x) * kGroupColumns, c0 = g0 + lane * kVec;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kChunkRows;
  const int rows_here = a.n - r0 < kChunkRows ? static_cast<int>(a.n - r0) : kChunkRows;
  const bool column_in = c0 < a.rows;  // rows is a multiple of kVec: a vector is all in or all out
  float x[kRowsPerThread][kVec];
#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int r = rr + k * kRowLanes;
    AlignedVector<T, kVec> w{};
    if (column_in && r < rows_here)
      w = *reinterpret_cast<const AlignedVector<T, kVec>*>(a.x + (r0 + r) * a.x_col_stride + c0);
#pragma unroll
    for (int q = 0; q < kVec; ++q) x[k][q] = to_compute<float>(w.v[q]);  // rows past the end hold 0
  }
  __shared__ float red[2][kPartialWarps][kGroupColumns];
  __shared__ float chunk_mean[kGroupColumns];
  float v[kVec];
#pragma unroll
  for (int q = 0; q < kVec; ++q) {
    v[q] = 0.f;
#pragma unroll
    for (int k = 0; k < kRowsPerThread; ++k) v[q] += Rms ? x[k][q] * x[k][q] : x[k][q];
  }
  warp_column_sums(v, red[0]);
  __syncthreads();
  const bool writer = t < kGroupColumns && g0 + t < a.rows;
  ChunkSums* out = p.partials + static_cast<int64_t>(blockIdx.y) * a.rows + g0 + t;
  const float s = t < kGroupColumns ? block_column_total(red[0], t) : 0.f;
  if constexpr (Rms) {
    if (writer) *out = {s, 0.f, 0.f, 0.f};
  } else {
    if (t < kGroupColumns) chunk_mean[t] = s / static_cast<float>(rows_here);
    __syncthreads();
    float d[kVec], m2[kVec];
#pragma unroll
    for (int q = 0; q < kVec; ++q) {
      const float m = chunk_mean[lane * kVec + q];
      d[q] = m2[q] = 0.f;
#pragma unroll
      for (int k = 0; k < kRowsPerThread; ++k) {
        if (rr + k * kRowLanes < rows_here) {
          const float e = x[k][q] - m;
          d[q] += e;
          m2[q] += e * e;
        }
      }
    }
    warp_column_sums(d, red[0]);  // every read of red[0] came before the barrier above
    warp_column_sums(m2, red[1]);
    __syncthreads();
    if (writer) *out = {s, block_column_total(red[0], t), block_column_total(red[1], t), 0.f};
  }
}

template <typename T, bool Rms>
__global__ void __launch_bounds__(kCombineThreads) combine_partials(TransposeArgs<T> p) {
  release_next_kernel();
  wait_for_prior_kernel();
  const NormKernelArgs<T>& a = p.a;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kCombineThreads + threadIdx.x;
  if (col >= a.rows) return;
  const ChunkSums* c = p.partials + col;
  const int64_t stride = a.rows;
  RowScale<float> sc;
  if constexpr (Rms) {
    float q = 0.f;
    for (int k = 0; k < p.chunks; ++k) q += c[k * stride].s;
    sc = rms_norm_scale(q, a);
  } else {
    float s = 0.f;
    for (int k = 0; k < p.chunks; ++k) s += c[k * stride].s;
    const float n = static_cast<float>(a.n), m = s / n;
    SumPair<float> dq{0.f, 0.f};
    for (int k = 0; k < p.chunks; ++k) {
      const ChunkSums part = c[k * stride];
      const float nc =
          static_cast<float>(a.n - int64_t{k} * kChunkRows < kChunkRows ? a.n - int64_t{k} * kChunkRows : kChunkRows);
      const float shift = part.s / nc - m;  // the chunk's mean from m
      dq.a += part.d + nc * shift;
      dq.b += part.m2 + 2.f * shift * part.d + nc * shift * shift;
    }
    sc = layer_norm_scale(m, dq, a, col, true);
  }
  p.scales[col] = {sc.shift, sc.correction, sc.rstd, 0.f};
}

// Shared memory holds the tile row by row (rows of S) with a pitch of 66 elements: the loads'
// 2-byte stores (8 lanes along a row, 4 rows) and the write's 2-byte reads (8 lanes down a
// column's 64 values, 4 columns) fall in different banks or share a word.
template <typename T>
__global__ void __launch_bounds__(kTileThreads) transpose_normalize(TransposeArgs<T> p) {
  const NormKernelArgs<T>& a = p.a;
  __shared__ T tile[kTile * kTilePitch];
  const int t = static_cast<int>(threadIdx.x);
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kTile, j0 = static_cast<int64_t>(blockIdx.y) * kTile;
  constexpr int kVectorsPerRow = kTile / kVec;
  // S was written before the chain's first kernel began (its wait); nothing in the chain writes it.
#pragma unroll
  for (int x = t; x < kTile * kVectorsPerRow; x += kTileThreads) {
    const int r = x / kVectorsPerRow, cv = x % kVectorsPerRow;
    const int64_t j = j0 + r, i = i0 + cv * kVec;
    AlignedVector<T, kVec> w{};
    if (j < a.n && i < a.rows) {
      // Through L2 (ld.global.cg): this SM's L1 may hold lines of S from before the chain's wait.
      const int4 raw = __ldcg(reinterpret_cast<const int4*>(a.x + j * a.x_col_stride + i));
      std::memcpy(&w, &raw, sizeof(w));
    }
#pragma unroll
    for (int q = 0; q < kVec; ++q) tile[r * kTilePitch + cv * kVec + q] = w.v[q];
  }
  wait_for_prior_kernel();
  release_next_kernel();
  __syncthreads();
#pragma unroll
  for (int x = t; x < kTile * kVectorsPerRow; x += kTileThreads) {
    const int c = x / kVectorsPerRow, jv = x % kVectorsPerRow;
    const int64_t i = i0 + c, j = j0 + jv * kVec;
    if (i >= a.rows || j >= a.n) continue;
    const ColumnScale s = p.scales[i];
    const RowScale<float> sc{s.shift, s.correction, s.rstd};
    float v[kVec];
#pragma unroll
    for (int q = 0; q < kVec; ++q) v[q] = to_compute<float>(tile[(jv * kVec + q) * kTilePitch + c]);
    write_normalized<kVec>(a, a.y + i * a.n, j, v, sc);
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

int64_t chunks_of(int64_t cols) { return (cols + kChunkRows - 1) / kChunkRows; }

template <typename T, bool Rms>
void launch_chain(const TransposeArgs<T>& p, cudaStream_t stream) {
  const NormKernelArgs<T>& a = p.a;
  const dim3 partial_grid(static_cast<unsigned>((a.rows + kGroupColumns - 1) / kGroupColumns),
                          static_cast<unsigned>(p.chunks));
  launch_dependent(column_partials<T, Rms>, partial_grid, dim3(kPartialThreads), stream, p);
  launch_dependent(combine_partials<T, Rms>,
                   dim3(static_cast<unsigned>((a.rows + kCombineThreads - 1) / kCombineThreads)), dim3(kCombineThreads),
                   stream, p);
  const dim3 tile_grid(static_cast<unsigned>((a.rows + kTile - 1) / kTile),
                       static_cast<unsigned>((a.n + kTile - 1) / kTile));
  launch_dependent(transpose_normalize<T>, tile_grid, dim3(kTileThreads), stream, p);
}

}  // namespace

int64_t row_norm_transpose_scratch(DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols) {
  if ((dtype != DType::Float16 && dtype != DType::BFloat16) || b.input_row_stride != 1 || rows % kVec != 0 ||
      cols % kVec != 0 || b.input_col_stride % kVec != 0 || !aligned16(b.input) || !aligned16(b.out) ||
      !aligned16(b.weight) || !aligned16(b.bias)) {
    return 0;
  }
  // S is read again by the write, from L2 while it fits in a quarter of it: on an H100 (50 MiB of
  // L2) faster than the tile kernel for fp16 2048 (8 MiB), slower for bf16 4096 (32 MiB)
  // (docs/perf.md, "The transposed 2-byte LayerNorm's chain, the remainder first"). Grids' y
  // within 65535.
  if (cols * b.input_col_stride * 2 > current_device_limits().l2_bytes / 4 || chunks_of(cols) > 65535 ||
      (cols + kTile - 1) / kTile > 65535) {
    return 0;
  }
  return (chunks_of(cols) + 1) * rows * static_cast<int64_t>(sizeof(ChunkSums));
}

void launch_row_norm_transpose(RowNormKind kind, DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols,
                               double eps, void* scratch, cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T> && sizeof(T) == 2) {
      TransposeArgs<T> p{norm_kernel_args<T>(b, rows, cols, eps), static_cast<ChunkSums*>(scratch), nullptr,
                         static_cast<int>(chunks_of(cols))};
      p.scales = reinterpret_cast<ColumnScale*>(p.partials + p.chunks * rows);
      if (kind == RowNormKind::Rms) launch_chain<T, true>(p, stream);
      else launch_chain<T, false>(p, stream);
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_row_norm_transpose: not fp16 or bf16");
}

}  // namespace anatomy::cuda
