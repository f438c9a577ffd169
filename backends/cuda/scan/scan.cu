// CUDA kernels of cumsum and cumprod (scan.h). The running value has the CPU's type (scan_cpu.cpp):
// float for fp16/bf16, double for fp32 and fp64, and for integers and bool a uint64 whose wrapping
// arithmetic gives two's-complement results. Integer scans are therefore exactly the CPU's (sums
// and products modulo 2^64 do not depend on the order); floating ones differ from the CPU's
// serial loop by rounding only where the parallel scans below regroup it.
//
// The shapes, all in a fixed order (bit-identical run to run, no atomics):
//   - rows contiguous in the output, up to kWarpRowMax long: one warp per row, chunks of 32
//     scanned with cub::WarpScan, each chunk's result combined with the carry of the chunks before;
//   - longer contiguous rows: one block per row, chunks of kBlockChunk with cub::BlockScan, the
//     same carry;
//   - a dim that is not innermost: one thread per row, walking it serially like the CPU (the same
//     bits as the CPU for every dtype), threads of a warp on neighbouring rows, so coalesced;
//   - too few rows to fill the GPU that way: tiles (Note [Tiled scans]).
// A chunk's carry is combined only from the second chunk on: the first chunk's values are the
// scan of the row's own elements, so a row of -0.0 sums to -0.0, as on the CPU.
//
// Note [Tiled scans]
//   One block (or thread) per row leaves the GPU idle when there are few long rows: one row of
//   16M floats took 18 ms that way, one column of 4M 400 ms. Such rows are cut into tiles of
//   equal length, and three launches follow: (1) each tile but the last is folded into its total
//   (a block reduction for contiguous rows, a serial fold per thread for columns); (2) the totals
//   of each row are scanned in place by the row kernels above, so total t becomes the carry of
//   tile t + 1; (3) each tile is scanned like a row, starting from its carry (tile 0 from none).
//   The totals live in scratch memory from the caching allocator (scan_scratch_bytes).
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/util_ptx.cuh>
#include <cub/warp/warp_scan.cuh>

#include <algorithm>
#include <type_traits>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/common/strided_offsets.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/scan/scan.h"
#include "anatomy/core/convert.h"

namespace anatomy::cuda {
namespace {

constexpr int64_t kWarpRowMax = 256;
constexpr int kWarpsPerBlock = kBlockThreads / 32;
constexpr int kScanThreads = 256;
constexpr int kScanItems = 4;  // per thread: a block scans 1024 elements at a time
constexpr int64_t kBlockChunk = kScanThreads * kScanItems;
// Contiguous rows: fewer rows than this are tiled when they hold two tiles or more.
constexpr int64_t kFewRows = 512;
constexpr int64_t kRowTile = 16 * kBlockChunk;
// Columns: fewer than this are tiled, into tiles of at least kMinColumnTile elements, so that
// about kColumnThreads threads walk them.
constexpr int64_t kFewColumns = 65536;
constexpr int64_t kMinColumnTile = 64;
constexpr int64_t kColumnThreads = int64_t{1} << 17;

// The CPU's accumulation type and conversions (scan_cpu.cpp's Acc, to_acc, from_acc).
template <typename T>
using scan_acc_t =
    std::conditional_t<is_reduced_float_v<T>, float, std::conditional_t<std::is_integral_v<T>, uint64_t, double>>;

template <typename T>
__device__ __forceinline__ scan_acc_t<T> to_acc(T v) {
  if constexpr (std::is_integral_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return convert<scan_acc_t<T>>(v);
}

template <typename T>
__device__ __forceinline__ T from_acc(scan_acc_t<T> v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<int64_t>(v));
  else return convert<T>(v);
}

template <bool Prod>
struct ScanOp {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    if constexpr (Prod) return a * b;
    else return a + b;
  }
  // What pads a partial chunk; it only ever follows the row's last element.
  template <typename A>
  __device__ __forceinline__ static A identity() {
    return Prod ? A(1) : A(0);
  }
};

// Rows are cut into `tiles` tiles of `tile` elements (the last one shorter); carries[row * tiles
// + t - 1] is what tile t > 0 starts from. Untiled: tiles = 1, tile = length, carries = nullptr.
template <typename Acc>
struct Tiling {
  int64_t tile;
  int64_t tiles;
  const Acc* carries;
};

template <typename T, bool Prod>
__global__ void scan_rows_warp_kernel(const T* in, T* out, ScanRows r) {
  using Acc = scan_acc_t<T>;
  using WarpScan = cub::WarpScan<Acc>;
  __shared__ typename WarpScan::TempStorage temp[kWarpsPerBlock];
  const ScanOp<Prod> op;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp; row < r.num_rows; row += warps) {
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const T* a = in + o[0];
    T* b = out + o[1];
    Acc carry = ScanOp<Prod>::template identity<Acc>();
    for (int64_t base = 0; base < r.length; base += 32) {
      const int64_t i = base + lane;
      Acc x = i < r.length ? to_acc<T>(a[i * r.in_stride]) : ScanOp<Prod>::template identity<Acc>();
      WarpScan(temp[warp]).InclusiveScan(x, x, op);
      if (base > 0) x = op(carry, x);
      if (i < r.length) b[i * r.out_stride] = from_acc<T>(x);
      carry = cub::ShuffleIndex<32>(x, 31, 0xffffffffu);
      __syncwarp();
    }
  }
}

// One block per (row, tile).
template <typename T, bool Prod>
__global__ void __launch_bounds__(kScanThreads)
    scan_rows_block_kernel(const T* in, T* out, ScanRows r, Tiling<scan_acc_t<T>> tiling) {
  using Acc = scan_acc_t<T>;
  using BlockScan = cub::BlockScan<Acc, kScanThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  const ScanOp<Prod> op;
  const int64_t work_items = r.num_rows * tiling.tiles;
  for (int64_t work = blockIdx.x; work < work_items; work += gridDim.x) {
    const int64_t row = work / tiling.tiles, t = work - row * tiling.tiles;
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const T* a = in + o[0];
    T* b = out + o[1];
    const int64_t end = min(r.length, (t + 1) * tiling.tile);
    bool has_carry = t > 0;
    Acc carry = has_carry ? tiling.carries[work - 1] : ScanOp<Prod>::template identity<Acc>();
    for (int64_t base = t * tiling.tile; base < end; base += kBlockChunk) {
      // A blocked arrangement: thread k holds elements base + k * kScanItems + j.
      const int64_t first = base + static_cast<int64_t>(threadIdx.x) * kScanItems;
      Acc x[kScanItems];
#pragma unroll
      for (int j = 0; j < kScanItems; ++j) {
        const int64_t i = first + j;
        x[j] = i < end ? to_acc<T>(a[i * r.in_stride]) : ScanOp<Prod>::template identity<Acc>();
      }
      Acc aggregate;
      BlockScan(temp).InclusiveScan(x, x, op, aggregate);
#pragma unroll
      for (int j = 0; j < kScanItems; ++j) {
        const int64_t i = first + j;
        if (has_carry) x[j] = op(carry, x[j]);
        if (i < end) b[i * r.out_stride] = from_acc<T>(x[j]);
      }
      carry = has_carry ? op(carry, aggregate) : aggregate;
      has_carry = true;
      __syncthreads();  // temp is reused by the next chunk
    }
  }
}

// Tiled contiguous rows, step 1: totals[row * tiles + t] = the fold of tile t, for every tile
// but the last (those are full: kRowTile elements, more than the block's threads).
template <typename T, bool Prod>
__global__ void __launch_bounds__(kScanThreads)
    scan_row_tile_totals_kernel(const T* in, ScanRows r, int64_t tile, int64_t tiles, scan_acc_t<T>* totals) {
  using Acc = scan_acc_t<T>;
  using BlockReduce = cub::BlockReduce<Acc, kScanThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const ScanOp<Prod> op;
  const int64_t work_items = r.num_rows * (tiles - 1);
  for (int64_t work = blockIdx.x; work < work_items; work += gridDim.x) {
    const int64_t row = work / (tiles - 1), t = work - row * (tiles - 1);
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const T* a = in + o[0] + t * tile * r.in_stride;
    Acc acc = to_acc<T>(a[static_cast<int64_t>(threadIdx.x) * r.in_stride]);
    for (int64_t i = threadIdx.x + kScanThreads; i < tile; i += kScanThreads)
      acc = op(acc, to_acc<T>(a[i * r.in_stride]));
    const Acc total = BlockReduce(temp).Reduce(acc, op);
    if (threadIdx.x == 0) totals[row * tiles + t] = total;
    __syncthreads();
  }
}

// One thread per row (column), or with tiles one thread per (tile, column), columns fastest so
// that a warp reads neighbouring columns. Step 3 of a tiled scan, or the whole untiled one.
template <typename T, bool Prod>
__global__ void scan_columns_kernel(const T* in, T* out, ScanRows r, Tiling<scan_acc_t<T>> tiling) {
  using Acc = scan_acc_t<T>;
  const ScanOp<Prod> op;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t work_items = r.num_rows * tiling.tiles;
  for (int64_t work = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; work < work_items; work += step) {
    const int64_t t = work / r.num_rows, row = work - t * r.num_rows;
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const int64_t begin = t * tiling.tile, end = min(r.length, begin + tiling.tile);
    const T* a = in + o[0];
    T* b = out + o[1];
    Acc acc = to_acc<T>(a[begin * r.in_stride]);
    if (t > 0) acc = op(tiling.carries[row * tiling.tiles + t - 1], acc);
    b[begin * r.out_stride] = from_acc<T>(acc);
    for (int64_t i = begin + 1; i < end; ++i) {
      acc = op(acc, to_acc<T>(a[i * r.in_stride]));
      b[i * r.out_stride] = from_acc<T>(acc);
    }
  }
}

// Tiled columns, step 1: totals[row * tiles + t] = the serial fold of tile t, every tile but the last.
template <typename T, bool Prod>
__global__ void scan_column_tile_totals_kernel(const T* in, ScanRows r, int64_t tile, int64_t tiles,
                                               scan_acc_t<T>* totals) {
  using Acc = scan_acc_t<T>;
  const ScanOp<Prod> op;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t work_items = r.num_rows * (tiles - 1);
  for (int64_t work = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; work < work_items; work += step) {
    const int64_t t = work / r.num_rows, row = work - t * r.num_rows;
    int64_t o[2];
    strided_offsets(r.rows, row, o);
    const T* a = in + o[0] + t * tile * r.in_stride;
    Acc acc = to_acc<T>(a[0]);
    for (int64_t i = 1; i < tile; ++i) acc = op(acc, to_acc<T>(a[i * r.in_stride]));
    totals[row * tiles + t] = acc;
  }
}

enum class ScanPath { Warp, Block, TiledRows, Columns, TiledColumns };

struct ScanPlan {
  ScanPath path;
  int64_t tile = 0;
  int64_t tiles = 1;
};

ScanPlan plan_scan(const ScanRows& r, bool innermost) {
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

template <typename T, bool Prod>
void scan_rows_untiled(const T* in, T* out, const ScanRows& r, cudaStream_t stream) {
  if (r.length <= kWarpRowMax) {
    const int64_t blocks = std::min<int64_t>((r.num_rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kMaxBlocks);
    scan_rows_warp_kernel<T, Prod><<<static_cast<unsigned>(blocks), kBlockThreads, 0, stream>>>(in, out, r);
  } else {
    const int64_t blocks = std::min<int64_t>(r.num_rows, kMaxBlocks);
    scan_rows_block_kernel<T, Prod><<<static_cast<unsigned>(blocks), kScanThreads, 0, stream>>>(
        in, out, r, Tiling<scan_acc_t<T>>{r.length, 1, nullptr});
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

// Step 2 of a tiled scan: the totals of each row ([num_rows, tiles], the last column unused)
// scanned in place, in the accumulation type (fp16/bf16 totals are floats, scanned like floats).
template <typename Acc, bool Prod>
void scan_tile_totals(Acc* totals, int64_t num_rows, int64_t tiles, cudaStream_t stream) {
  ScanRows t;
  t.rows.ndim = 1;
  t.rows.sizes[0] = num_rows;
  t.rows.strides[0][0] = tiles;
  t.rows.strides[1][0] = tiles;
  t.num_rows = num_rows;
  t.length = tiles - 1;
  t.in_stride = 1;
  t.out_stride = 1;
  scan_rows_untiled<Acc, Prod>(totals, totals, t, stream);
}

template <typename T, bool Prod>
void scan(const T* in, T* out, const ScanRows& r, bool innermost, void* scratch, cudaStream_t stream) {
  using Acc = scan_acc_t<T>;
  const ScanPlan plan = plan_scan(r, innermost);
  Acc* totals = static_cast<Acc*>(scratch);
  const Tiling<Acc> tiling{plan.tile, plan.tiles, totals};
  switch (plan.path) {
    case ScanPath::Warp:
    case ScanPath::Block:
      return scan_rows_untiled<T, Prod>(in, out, r, stream);
    case ScanPath::Columns:
      scan_columns_kernel<T, Prod><<<grid_blocks(r.num_rows), kBlockThreads, 0, stream>>>(in, out, r, tiling);
      ANATOMY_CUDA_LAUNCH_CHECK();
      return;
    case ScanPath::TiledRows: {
      const int64_t blocks = std::min<int64_t>(r.num_rows * plan.tiles, kMaxBlocks);
      scan_row_tile_totals_kernel<T, Prod>
          <<<static_cast<unsigned>(blocks), kScanThreads, 0, stream>>>(in, r, plan.tile, plan.tiles, totals);
      ANATOMY_CUDA_LAUNCH_CHECK();
      scan_tile_totals<Acc, Prod>(totals, r.num_rows, plan.tiles, stream);
      scan_rows_block_kernel<T, Prod><<<static_cast<unsigned>(blocks), kScanThreads, 0, stream>>>(in, out, r, tiling);
      ANATOMY_CUDA_LAUNCH_CHECK();
      return;
    }
    case ScanPath::TiledColumns: {
      const unsigned blocks = grid_blocks(r.num_rows * plan.tiles);
      scan_column_tile_totals_kernel<T, Prod>
          <<<blocks, kBlockThreads, 0, stream>>>(in, r, plan.tile, plan.tiles, totals);
      ANATOMY_CUDA_LAUNCH_CHECK();
      scan_tile_totals<Acc, Prod>(totals, r.num_rows, plan.tiles, stream);
      scan_columns_kernel<T, Prod><<<blocks, kBlockThreads, 0, stream>>>(in, out, r, tiling);
      ANATOMY_CUDA_LAUNCH_CHECK();
      return;
    }
  }
}

}  // namespace

size_t scan_scratch_bytes(DType dtype, const ScanRows& rows, bool innermost) {
  const ScanPlan plan = plan_scan(rows, innermost);
  if (plan.path != ScanPath::TiledRows && plan.path != ScanPath::TiledColumns) return 0;
  size_t acc_bytes = 8;
  dtype_switch(dtype, [&](auto tag) {
    acc_bytes = sizeof(scan_acc_t<typename decltype(tag)::type>);
    return true;
  });
  return static_cast<size_t>(rows.num_rows * plan.tiles) * acc_bytes;
}

bool launch_scan(bool prod, DType dtype, const void* in, void* out, const ScanRows& rows, bool innermost, void* scratch,
                 cudaStream_t stream) {
  return dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (prod) scan<T, true>(static_cast<const T*>(in), static_cast<T*>(out), rows, innermost, scratch, stream);
    else scan<T, false>(static_cast<const T*>(in), static_cast<T*>(out), rows, innermost, scratch, stream);
    return true;
  });
}

}  // namespace anatomy::cuda
