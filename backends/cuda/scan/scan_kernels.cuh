// Internal to scan/: included by the room's own files only (its launcher header is launch.h).
// The scan kernels (launch.h), written once over a scan policy S and instantiated by scan.cu
// (cumsum, cumprod, logcumsumexp) and scan_extremum.cu (cummax, cummin).
//
// Note [Scan policies]
//   A policy says what the kernels scan:
//     using In, Acc, Out;   the element type, the running value, where results go
//     using Op;             the combine op (dispatch/ops/scan_functors.h): associative, earlier first
//     using Totals;         the policy that scans a tiled scan's totals (Acc arrays, in place)
//     static Acc load(const In* in, int64_t offset, int64_t i);  the element at `offset`, i along its row
//     static void store(Out out, int64_t offset, Acc v);         the result at `offset`
//   The kernels combine in a fixed order, so every scan is bit-identical run to run; an integer
//   sum or product, or a max or min, does not depend on the order at all, so it is the CPU's.
//
// The shapes, all in a fixed order (no atomics):
//   - rows contiguous in the output, up to kWarpRowMax long: one warp per row, chunks of 32
//     scanned with cub::WarpScan, each chunk's result combined with the carry of the chunks before;
//   - longer contiguous rows: one block per row, chunks of kBlockChunk with cub::BlockScan, the
//     same carry;
//   - a dim that is not innermost: one thread per row, walking it serially like the CPU (the same
//     bits as the CPU for every dtype), threads of a warp on neighbouring rows, so coalesced;
//   - too few rows to fill the GPU that way: tiles (Note [Tiled scans]).
// A chunk's carry is combined only from the second chunk on: the first chunk's values are the
// scan of the row's own elements, so a row of -0.0 sums to -0.0, as on the CPU. The identity
// pads a partial chunk only after the row's last element, whose results are not stored.
//
// Note [Tiled scans]
//   One block (or thread) per row leaves the GPU idle when there are few long rows (one row of
//   16M floats, or one column of 4M, takes milliseconds to hundreds of them). Such rows are cut into tiles of
//   equal length, and three launches follow: (1) each tile but the last is folded into its total
//   (a block reduction for contiguous rows, a serial fold per thread for columns); (2) the totals
//   of each row are scanned in place by the row kernels above, so total t becomes the carry of
//   tile t + 1; (3) each tile is scanned like a row, starting from its carry (tile 0 from none).
//   The totals live in scratch memory from the caching allocator (scan_scratch_bytes).
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/util_ptx.cuh>
#include <cub/warp/warp_scan.cuh>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/common/strided_offsets.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/scan/launch.h"

namespace anatomy::cuda::scan_kernels {

constexpr int64_t kWarpRowMax = 256;
constexpr int kWarpsPerBlock = kBlockThreads / 32;
constexpr int kScanThreads = 256;
constexpr int kScanItems = 4;  // per thread: a block scans 1024 elements at a time
constexpr int64_t kBlockChunk = kScanThreads * kScanItems;
// Contiguous rows: fewer rows than this are tiled when they hold two tiles or more.
constexpr int64_t kFewRows = 512;
constexpr int64_t kRowTile = 16 * kBlockChunk;  // whole chunks (scan_row_tile_totals_kernel)
// Columns: fewer than this are tiled, into tiles of at least kMinColumnTile elements, so that
// about kColumnThreads threads walk them.
constexpr int64_t kFewColumns = 65536;
constexpr int64_t kMinColumnTile = 64;
constexpr int64_t kColumnThreads = int64_t{1} << 17;

// The policy of a tiled scan's totals: Acc values read and written as they are.
template <typename A, typename CombineOp>
struct CarryScan {
  using In = A;
  using Acc = A;
  using Out = A*;
  using Op = CombineOp;
  using Totals = CarryScan;
  __device__ __forceinline__ static Acc load(const In* in, int64_t offset, int64_t) { return in[offset]; }
  __device__ __forceinline__ static void store(Out out, int64_t offset, Acc v) { out[offset] = v; }
};

template <typename S>
__device__ __forceinline__ typename S::Acc identity() {
  return S::Op::template identity<typename S::Acc>();
}

// Rows are cut into `tiles` tiles of `tile` elements (the last one shorter); carries[row * tiles
// + t - 1] is what tile t > 0 starts from. Untiled: tiles = 1, tile = length, carries = nullptr.
template <typename Acc>
struct Tiling {
  int64_t tile;
  int64_t tiles;
  const Acc* carries;
};

template <typename S>
__global__ void scan_rows_warp_kernel(const typename S::In* in, typename S::Out out, ScanRows r) {
  using Acc = typename S::Acc;
  using WarpScan = cub::WarpScan<Acc>;
  __shared__ typename WarpScan::TempStorage temp[kWarpsPerBlock];
  const typename S::Op op;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp; row < r.num_rows; row += warps) {
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    Acc carry = identity<S>();
    for (int64_t base = 0; base < r.length; base += 32) {
      const int64_t i = base + lane;
      Acc x = i < r.length ? S::load(in, o[0] + i * r.in_stride, i) : identity<S>();
      WarpScan(temp[warp]).InclusiveScan(x, x, op);
      if (base > 0) x = op(carry, x);
      if (i < r.length) S::store(out, o[1] + i * r.out_stride, x);
      carry = cub::ShuffleIndex<32>(x, 31, 0xffffffffu);
      __syncwarp();
    }
  }
}

// One block per (row, tile).
template <typename S>
__global__ void __launch_bounds__(kScanThreads)
    scan_rows_block_kernel(const typename S::In* in, typename S::Out out, ScanRows r, Tiling<typename S::Acc> tiling) {
  using Acc = typename S::Acc;
  using BlockScan = cub::BlockScan<Acc, kScanThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  const typename S::Op op;
  const int64_t work_items = r.num_rows * tiling.tiles;
  for (int64_t work = blockIdx.x; work < work_items; work += gridDim.x) {
    const int64_t row = work / tiling.tiles, t = work - row * tiling.tiles;
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const int64_t end = min(r.length, (t + 1) * tiling.tile);
    bool has_carry = t > 0;
    Acc carry = has_carry ? tiling.carries[work - 1] : identity<S>();
    for (int64_t base = t * tiling.tile; base < end; base += kBlockChunk) {
      // A blocked arrangement: thread k holds elements base + k * kScanItems + j.
      const int64_t first = base + static_cast<int64_t>(threadIdx.x) * kScanItems;
      Acc x[kScanItems];
#pragma unroll
      for (int j = 0; j < kScanItems; ++j) {
        const int64_t i = first + j;
        x[j] = i < end ? S::load(in, o[0] + i * r.in_stride, i) : identity<S>();
      }
      Acc aggregate;
      BlockScan(temp).InclusiveScan(x, x, op, aggregate);
#pragma unroll
      for (int j = 0; j < kScanItems; ++j) {
        const int64_t i = first + j;
        if (has_carry) x[j] = op(carry, x[j]);
        if (i < end) S::store(out, o[1] + i * r.out_stride, x[j]);
      }
      carry = has_carry ? op(carry, aggregate) : aggregate;
      has_carry = true;
      __syncthreads();  // temp is reused by the next chunk
    }
  }
}

// Tiled contiguous rows, step 1: totals[row * tiles + t] = the fold of tile t, for every tile
// but the last (those are full: kRowTile elements, a whole number of chunks). Each chunk is
// loaded like the block scan's and reduced in element order (cub's reduction keeps the threads'
// order), the chunks folded in order: cummax's op is not commutative.
template <typename S>
__global__ void __launch_bounds__(kScanThreads)
    scan_row_tile_totals_kernel(const typename S::In* in, ScanRows r, int64_t tile, int64_t tiles,
                                typename S::Acc* totals) {
  using Acc = typename S::Acc;
  using BlockReduce = cub::BlockReduce<Acc, kScanThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const typename S::Op op;
  const int64_t work_items = r.num_rows * (tiles - 1);
  for (int64_t work = blockIdx.x; work < work_items; work += gridDim.x) {
    const int64_t row = work / (tiles - 1), t = work - row * (tiles - 1);
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const int64_t begin = t * tile;
    Acc total{};  // thread 0's
    for (int64_t base = begin; base < begin + tile; base += kBlockChunk) {
      const int64_t first = base + static_cast<int64_t>(threadIdx.x) * kScanItems;
      Acc x[kScanItems];
#pragma unroll
      for (int j = 0; j < kScanItems; ++j) x[j] = S::load(in, o[0] + (first + j) * r.in_stride, first + j);
      const Acc chunk = BlockReduce(temp).Reduce(x, op);
      if (threadIdx.x == 0) total = base == begin ? chunk : op(total, chunk);
      __syncthreads();  // temp is reused by the next chunk
    }
    if (threadIdx.x == 0) totals[row * tiles + t] = total;
  }
}

// One thread per row (column), or with tiles one thread per (tile, column), columns fastest so
// that a warp reads neighbouring columns. Step 3 of a tiled scan, or the whole untiled one.
template <typename S>
__global__ void scan_columns_kernel(const typename S::In* in, typename S::Out out, ScanRows r,
                                    Tiling<typename S::Acc> tiling) {
  using Acc = typename S::Acc;
  const typename S::Op op;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t work_items = r.num_rows * tiling.tiles;
  for (int64_t work = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; work < work_items; work += step) {
    const int64_t t = work / r.num_rows, row = work - t * r.num_rows;
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const int64_t begin = t * tiling.tile, end = min(r.length, begin + tiling.tile);
    Acc acc = S::load(in, o[0] + begin * r.in_stride, begin);
    if (t > 0) acc = op(tiling.carries[row * tiling.tiles + t - 1], acc);
    S::store(out, o[1] + begin * r.out_stride, acc);
    for (int64_t i = begin + 1; i < end; ++i) {
      acc = op(acc, S::load(in, o[0] + i * r.in_stride, i));
      S::store(out, o[1] + i * r.out_stride, acc);
    }
  }
}

// Tiled columns, step 1: totals[row * tiles + t] = the serial fold of tile t, every tile but the last.
template <typename S>
__global__ void scan_column_tile_totals_kernel(const typename S::In* in, ScanRows r, int64_t tile, int64_t tiles,
                                               typename S::Acc* totals) {
  using Acc = typename S::Acc;
  const typename S::Op op;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t work_items = r.num_rows * (tiles - 1);
  for (int64_t work = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; work < work_items; work += step) {
    const int64_t t = work / r.num_rows, row = work - t * r.num_rows;
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const int64_t begin = t * tile;
    Acc acc = S::load(in, o[0] + begin * r.in_stride, begin);
    for (int64_t i = begin + 1; i < begin + tile; ++i) acc = op(acc, S::load(in, o[0] + i * r.in_stride, i));
    totals[row * tiles + t] = acc;
  }
}

enum class ScanPath { Warp, Block, TiledRows, Columns, TiledColumns };

struct ScanPlan {
  ScanPath path;
  int64_t tile = 0;
  int64_t tiles = 1;
};

inline ScanPlan plan_scan(const ScanRows& r, bool innermost) {
  if (innermost) {
    if (r.length <= kWarpRowMax) return {ScanPath::Warp};
    if (r.num_rows < kFewRows && r.length >= 2 * kRowTile) {
      return {ScanPath::TiledRows, kRowTile, (r.length + kRowTile - 1) / kRowTile};
    }
    return {ScanPath::Block, r.length, 1};
  }
  if (r.num_rows < kFewColumns && r.length >= 2 * kMinColumnTile * 2) {
    const int64_t tiles_wanted = std::max<int64_t>(2, kColumnThreads / r.num_rows);
    const int64_t tile = std::max(kMinColumnTile, (r.length + tiles_wanted - 1) / tiles_wanted);
    const int64_t tiles = (r.length + tile - 1) / tile;
    if (tiles >= 2) return {ScanPath::TiledColumns, tile, tiles};
  }
  return {ScanPath::Columns, r.length, 1};
}

// The scratch a scan with running values of `acc_bytes` needs: its tiles' totals, if tiled.
inline size_t scratch_bytes(size_t acc_bytes, const ScanRows& rows, bool innermost) {
  const ScanPlan plan = plan_scan(rows, innermost);
  if (plan.path != ScanPath::TiledRows && plan.path != ScanPath::TiledColumns) return 0;
  return static_cast<size_t>(rows.num_rows * plan.tiles) * acc_bytes;
}

template <typename S>
void scan_rows_untiled(const typename S::In* in, typename S::Out out, const ScanRows& r, cudaStream_t stream) {
  if (r.length <= kWarpRowMax) {
    const int64_t blocks = std::min<int64_t>((r.num_rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kMaxBlocks);
    scan_rows_warp_kernel<S><<<static_cast<unsigned>(blocks), kBlockThreads, 0, stream>>>(in, out, r);
  } else {
    const int64_t blocks = std::min<int64_t>(r.num_rows, kMaxBlocks);
    scan_rows_block_kernel<S><<<static_cast<unsigned>(blocks), kScanThreads, 0, stream>>>(
        in, out, r, Tiling<typename S::Acc>{r.length, 1, nullptr});
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

// Step 2 of a tiled scan: the totals of each row ([num_rows, tiles], the last column unused)
// scanned in place by S's Totals policy.
template <typename S>
void scan_tile_totals(typename S::Acc* totals, int64_t num_rows, int64_t tiles, cudaStream_t stream) {
  using T = typename S::Totals;
  static_assert(std::is_same_v<typename T::In, typename S::Acc> && std::is_same_v<typename T::Out, typename S::Acc*>);
  ScanRows t;
  t.rows.ndim = 1;
  t.rows.sizes[0] = num_rows;
  t.rows.strides[0][0] = tiles;
  t.rows.strides[1][0] = tiles;
  t.num_rows = num_rows;
  t.length = tiles - 1;
  t.in_stride = 1;
  t.out_stride = 1;
  scan_rows_untiled<T>(totals, totals, t, stream);
}

template <typename S>
void scan(const typename S::In* in, typename S::Out out, const ScanRows& r, bool innermost, void* scratch,
          cudaStream_t stream) {
  using Acc = typename S::Acc;
  const ScanPlan plan = plan_scan(r, innermost);
  Acc* totals = static_cast<Acc*>(scratch);
  const Tiling<Acc> tiling{plan.tile, plan.tiles, totals};
  switch (plan.path) {
    case ScanPath::Warp:
    case ScanPath::Block:
      return scan_rows_untiled<S>(in, out, r, stream);
    case ScanPath::Columns:
      scan_columns_kernel<S><<<grid_blocks(r.num_rows), kBlockThreads, 0, stream>>>(in, out, r, tiling);
      ANATOMY_CUDA_LAUNCH_CHECK();
      return;
    case ScanPath::TiledRows: {
      const int64_t blocks = std::min<int64_t>(r.num_rows * plan.tiles, kMaxBlocks);
      scan_row_tile_totals_kernel<S>
          <<<static_cast<unsigned>(blocks), kScanThreads, 0, stream>>>(in, r, plan.tile, plan.tiles, totals);
      ANATOMY_CUDA_LAUNCH_CHECK();
      scan_tile_totals<S>(totals, r.num_rows, plan.tiles, stream);
      scan_rows_block_kernel<S><<<static_cast<unsigned>(blocks), kScanThreads, 0, stream>>>(in, out, r, tiling);
      ANATOMY_CUDA_LAUNCH_CHECK();
      return;
    }
    case ScanPath::TiledColumns: {
      const unsigned blocks = grid_blocks(r.num_rows * plan.tiles);
      scan_column_tile_totals_kernel<S><<<blocks, kBlockThreads, 0, stream>>>(in, r, plan.tile, plan.tiles, totals);
      ANATOMY_CUDA_LAUNCH_CHECK();
      scan_tile_totals<S>(totals, r.num_rows, plan.tiles, stream);
      scan_columns_kernel<S><<<blocks, kBlockThreads, 0, stream>>>(in, out, r, tiling);
      ANATOMY_CUDA_LAUNCH_CHECK();
      return;
    }
  }
}

}  // namespace anatomy::cuda::scan_kernels
