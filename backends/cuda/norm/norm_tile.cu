// CUDA layer_norm and rms_norm over an input whose rows lie closer together in memory than the
// values of one row: a transposed matrix (rows 1 element apart, values m apart), c01
// contiguity-bench's transposed_view. Same formulas as norm.cu (Note [Two-pass statistics in
// fp32]); only the way the input is read differs.
//
// Note [Tiles of adjacent rows]
//   A row kernel would read such an input one value per 32-byte sector, and PyTorch copies it
//   first (a read and a write more). The tile kernel takes R adjacent rows at once: each load
//   reads the R values of one column that lie side by side (R * sizeof(T) bytes, one 16-byte
//   vector where the layout allows), the R x n tile stays in shared memory, each row is reduced
//   there (the sums of the threads that share a row meet by shuffles, then across warps in a fixed
//   order), and the output is written row by row, coalesced. One read and one write of each
//   element, as the contiguous kernels. R is 16 bytes of values (4 floats, 8 halves, 2 doubles),
//   halved while the tile does not fit one block's shared memory; a row too long for R = 2 is
//   copied instead (row_norm_tile_rows). A 16-byte tile is faster than 32 bytes, narrower tiles
//   that let more blocks share an SM lose more to the sectors they split than they win, and
//   blocks of 512 threads are faster than 256 and 1024 (docs/perf.md, "The second run with the
//   peer: the tool's runner, LayerNorm's strided views").
#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/norm/launch.h"
#include "anatomy/backends/cuda/norm/row_norm.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device_limits.h"

namespace anatomy::cuda {
namespace {

inline constexpr int kTileThreads = 512;
inline constexpr int kTileWarps = kTileThreads / 32;
inline constexpr int kMaxTileRows = 8;  // 16 bytes of fp16 / bf16, the widest tile

// Value (c, r) of the tile: columns R + 1 apart, so that the output pass, whose threads read one
// row's values of consecutive columns, spreads them over the banks.
__device__ __forceinline__ int64_t tile_slot(int64_t c, int r, int R) { return c * (R + 1) + r; }

template <typename A>
struct TileShared {
  SumPair<A> partials[kTileWarps][kMaxTileRows];
  SumPair<A> totals[kMaxTileRows];
  RowScale<A> scale[kMaxTileRows];
};

// The shared memory the kernel declares itself, beside the tile.
template <typename A>
inline constexpr int kTileStaticBytes = static_cast<int>(sizeof(TileShared<A>));

// Each row's sum over the threads that share it: thread t holds rows (t % G) * Vec ... + Vec - 1
// of the tile (G = R / Vec). Lanes of a warp with the same t % G meet by shuffles, the warps'
// partials in warp order; sh.totals[r] holds row r's sum on return, for every thread.
template <int Vec, typename A>
__device__ __forceinline__ void sum_tile_rows(SumPair<A> (&p)[Vec], int G, int R, TileShared<A>& sh) {
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const AddPairOp<A> op;
#pragma unroll
  for (int j = 0; j < Vec; ++j) {
    for (int offset = G; offset < 32; offset <<= 1) p[j] = op.combine(p[j], shfl_from(p[j], lane ^ offset));
  }
  if (lane < G) {
#pragma unroll
    for (int j = 0; j < Vec; ++j) sh.partials[warp][lane * Vec + j] = p[j];
  }
  __syncthreads();
  if (threadIdx.x < static_cast<unsigned>(R)) {
    SumPair<A> total = op.identity();
    for (int w = 0; w < kTileWarps; ++w) total = op.combine(total, sh.partials[w][threadIdx.x]);
    sh.totals[threadIdx.x] = total;
  }
  __syncthreads();
}

// Vec: values of adjacent rows moved by one 16-byte load (1: scalar loads, any strides; > 1: rows
// 1 element apart, 16-byte aligned columns, R a multiple of Vec).
template <typename T, int Vec, bool Rms>
__global__ void __launch_bounds__(kTileThreads) norm_tile_kernel(NormKernelArgs<T> a, int R) {
  using A = opmath_t<T>;
  extern __shared__ __align__(16) unsigned char norm_tile_smem[];
  T* tile = reinterpret_cast<T*>(norm_tile_smem);
  __shared__ TileShared<A> sh;
  const int G = R / Vec, t = static_cast<int>(threadIdx.x), r0 = (t % G) * Vec;
  const int64_t n = a.n, c0 = t / G, c_step = kTileThreads / G;
  const A zero = A(0);
  for (int64_t row0 = static_cast<int64_t>(blockIdx.x) * R; row0 < a.rows;
       row0 += static_cast<int64_t>(gridDim.x) * R) {
    const int rows_here = a.rows - row0 < R ? static_cast<int>(a.rows - row0) : R;
    // Load the tile, summing each row (its squares for rms_norm) on the way.
    SumPair<A> s[Vec];
#pragma unroll
    for (int j = 0; j < Vec; ++j) s[j] = {zero, zero};
    const T* base = a.x + (row0 + r0) * a.x_stride;
    const bool full = r0 + Vec <= rows_here;
#pragma unroll 4
    for (int64_t c = c0; c < n; c += c_step) {
      T v[Vec];
      const T* p = base + c * a.x_col_stride;
      if constexpr (Vec > 1) {
        if (full) {
          const AlignedVector<T, Vec> w = *reinterpret_cast<const AlignedVector<T, Vec>*>(p);
#pragma unroll
          for (int j = 0; j < Vec; ++j) v[j] = w.v[j];
        } else {
#pragma unroll
          for (int j = 0; j < Vec; ++j) v[j] = r0 + j < rows_here ? p[j] : static_cast<T>(zero);
        }
      } else {
        v[0] = full ? p[0] : static_cast<T>(zero);
      }
#pragma unroll
      for (int j = 0; j < Vec; ++j) {
        tile[tile_slot(c, r0 + j, R)] = v[j];
        const A x = to_compute<A>(v[j]);
        s[j].a += Rms ? x * x : x;
      }
    }
    sum_tile_rows(s, G, R, sh);
    if constexpr (Rms) {
      if (t < R) sh.scale[t] = rms_norm_scale(sh.totals[t].a, a);
    } else {
      // The second pass of the statistics, over the tile in shared memory.
      A m[Vec];
#pragma unroll
      for (int j = 0; j < Vec; ++j) {
        m[j] = sh.totals[r0 + j].a / static_cast<A>(n);
        s[j] = {zero, zero};
      }
      for (int64_t c = c0; c < n; c += c_step) {
#pragma unroll
        for (int j = 0; j < Vec; ++j) {
          const A d = to_compute<A>(tile[tile_slot(c, r0 + j, R)]) - m[j];
          s[j].a += d;
          s[j].b += d * d;
        }
      }
      // Every thread has read the sums it needs before sum_tile_rows's first barrier, after which
      // the totals are rewritten.
      const A mean = t < R ? sh.totals[t].a / static_cast<A>(n) : zero;
      sum_tile_rows(s, G, R, sh);
      if (t < R) sh.scale[t] = layer_norm_scale(mean, sh.totals[t], a, row0 + t, t < rows_here);
    }
    __syncthreads();
    // Write the output row by row: consecutive threads, consecutive columns.
    for (int r = 0; r < rows_here; ++r) {
      const RowScale<A> sc = sh.scale[r];
      T* yr = a.y + (row0 + r) * n;
      for (int64_t c = t; c < n; c += kTileThreads) {
        const A v = to_compute<A>(tile[tile_slot(c, r, R)]);
        write_normalized<1>(a, yr, c, &v, sc);
      }
    }
    __syncthreads();  // the next tile's loads overwrite this one
  }
}

// Lets `Kernel` take up to the device's whole opt-in shared memory, once per device.
template <auto Kernel, typename A>
void allow_large_tiles() {
  static std::array<std::once_flag, kDeviceLimitsDevices> once;
  const int device = current_device_limits().device;
  std::call_once(once[device], [] {
    const int bytes = current_device_limits().shared_memory_per_block_optin - kTileStaticBytes<A>;
    ANATOMY_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  });
}

int64_t tile_bytes(int64_t cols, int rows, int element_size) { return cols * (rows + 1) * element_size; }

// Blocks of the kernel that one SM holds at once with tiles of `bytes` (0: the tile does not fit).
template <typename A>
int tile_blocks_per_sm(int64_t bytes) {
  const DeviceLimits& l = current_device_limits();
  if (bytes + kTileStaticBytes < A >> l.shared_memory_per_block_optin) return 0;
  const int64_t per_block = bytes + kTileStaticBytes<A> + l.reserved_shared_memory_per_block;
  return static_cast<int>(std::min<int64_t>(l.max_threads_per_multiprocessor / kTileThreads,
                                            l.shared_memory_per_multiprocessor / per_block));
}

template <typename T>
int tile_rows_for(int64_t cols) {
  using A = opmath_t<T>;
  static_assert(kRowVec<T> <= kMaxTileRows);
  for (int r = kRowVec<T>; r >= 2; r /= 2) {
    if (tile_blocks_per_sm<A>(tile_bytes(cols, r, sizeof(T))) >= 1) return r;
  }
  return 0;
}

template <typename T, bool Rms>
void launch_tiles(const NormKernelArgs<T>& a, int R, cudaStream_t stream) {
  using A = opmath_t<T>;
  constexpr int kVec = kRowVec<T>;
  const bool vec = R % kVec == 0 && a.x_stride == 1 && reinterpret_cast<uintptr_t>(a.x) % 16 == 0 &&
                   (a.x_col_stride * static_cast<int64_t>(sizeof(T))) % 16 == 0;
  const int64_t bytes = tile_bytes(a.n, R, sizeof(T));
  const int64_t tiles = (a.rows + R - 1) / R;
  const int64_t resident = int64_t{current_device_limits().multiprocessors} * std::max(1, tile_blocks_per_sm<A>(bytes));
  const unsigned grid = row_grid(std::min(tiles, resident));
  auto go = [&]<auto Kernel>() {
    allow_large_tiles<Kernel, A>();
    Kernel<<<grid, kTileThreads, static_cast<size_t>(bytes), stream>>>(a, R);
  };
  if (vec) go.template operator()<norm_tile_kernel<T, kVec, Rms>>();
  else go.template operator()<norm_tile_kernel<T, 1, Rms>>();
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

int row_norm_tile_rows(DType dtype, int64_t cols) {
  int rows = 0;
  dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) rows = tile_rows_for<T>(cols);
    return true;
  });
  return rows;
}

void launch_row_norm_tiles(RowNormKind kind, DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols,
                           int tile_rows, double eps, cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      const NormKernelArgs<T> a = norm_kernel_args<T>(b, rows, cols, eps);
      if (kind == RowNormKind::Rms) launch_tiles<T, true>(a, tile_rows, stream);
      else launch_tiles<T, false>(a, tile_rows, stream);
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_row_norm_tiles: not a floating dtype");
}

}  // namespace anatomy::cuda
