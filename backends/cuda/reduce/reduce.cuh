// A building block reduce/ shares with optim/ (not a launcher: the room's is launch.h).
// The CUDA reduction kernel templates (Note [CUDA reduction paths], launch.h), the device twin
// of backends/cpu/reduce_loops.h: every reduction is an Op
//   using acc_t = ...;                                   (trivially copyable, <= kMaxAccBytes)
//   acc_t identity() const;                              the value of an empty reduction
//   acc_t step(acc_t a, T x, int64_t i) const;           fold element x at reduced index i
//   acc_t combine(acc_t a, acc_t b) const;               merge two partial results
//   void write(int64_t out, acc_t a) const;              store output `out`
//   using vector_loads = std::true_type;                 (optional) may read 16-byte vectors
// run by launch_reduce<T>(geometry, input, scratch, op, stream). The ops are the CPU's own
// host-device functors (dispatch/ops/reduce_functors.h: same accumulation types, same NaN and tie
// rules); only the order in which partial results are combined differs.
//
// Device code only: included by .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"
#include "anatomy/backends/cuda/reduce/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/dispatch/ops/reduce_functors.h"

namespace anatomy::cuda {

// ---- cooperation between threads ----

// __shfl_down_sync of any trivially copyable accumulator, 4 bytes at a time.
template <typename A>
__device__ __forceinline__ A shfl_down(const A& v, unsigned delta) {
  constexpr int kWords = (sizeof(A) + 3) / 4;
  unsigned w[kWords] = {};
  memcpy(w, &v, sizeof(A));
#pragma unroll
  for (int i = 0; i < kWords; ++i) w[i] = __shfl_down_sync(0xffffffffu, w[i], delta);
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}

// Every lane of a full warp calls it; lane 0 gets the warp's result.
template <typename Op, typename A>
__device__ __forceinline__ A warp_reduce(const Op& op, A a) {
#pragma unroll
  for (unsigned delta = 16; delta > 0; delta /= 2) a = op.combine(a, shfl_down(a, delta));
  return a;
}

// Every thread of a 1-D block of kReduceThreads calls it (it synchronizes the block); thread 0
// gets the block's result.
template <typename Op, typename A>
__device__ __forceinline__ A block_reduce(const Op& op, A a) {
  __shared__ double raw[(kReduceWarps * sizeof(A) + sizeof(double) - 1) / sizeof(double)];
  A* shared = reinterpret_cast<A*>(raw);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  a = warp_reduce(op, a);
  if (lane == 0) shared[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < kReduceWarps ? shared[lane] : op.identity();
    a = warp_reduce(op, a);
  }
  __syncthreads();  // `shared` may be written again by the caller's next row
  return a;
}

// Folds x[i * pitch] for i = begin, begin + stride, ... < end, in that order; four loads are
// issued before their folds so that each thread keeps several in flight.
template <typename T, typename Op>
__device__ __forceinline__ typename Op::acc_t thread_reduce(const T* __restrict__ x, int64_t begin, int64_t end,
                                                            int64_t stride, int64_t pitch, const Op& op) {
  typename Op::acc_t a = op.identity();
  int64_t i = begin;
  for (; i + 3 * stride < end; i += 4 * stride) {
    const T v0 = x[i * pitch], v1 = x[(i + stride) * pitch], v2 = x[(i + 2 * stride) * pitch],
            v3 = x[(i + 3 * stride) * pitch];
    a = op.step(a, v0, i);
    a = op.step(a, v1, i + stride);
    a = op.step(a, v2, i + 2 * stride);
    a = op.step(a, v3, i + 3 * stride);
  }
  for (; i < end; i += stride) a = op.step(a, x[i * pitch], i);
  return a;
}

// Ops that declare vector_loads (sum and mean) are launched with vector loads when the geometry
// asks for them; the others always read one element at a time.
template <typename Op>
concept VectorLoadOp = requires {
  typename Op::vector_loads;
};

// The row elements [begin, end) of x (begin a multiple of Vec, x 16-byte aligned when Vec > 1)
// that thread `rank` of `threads` folds: with Vec > 1 the 16-byte vectors rank, rank + threads,
// ... (four in flight), then at most one of the last (end - begin) % Vec elements.
template <int Vec, typename T, typename Op>
__device__ __forceinline__ typename Op::acc_t row_chunk_reduce(const T* __restrict__ x, int64_t begin, int64_t end,
                                                               int64_t rank, int64_t threads, const Op& op) {
  if constexpr (Vec == 1) {
    return thread_reduce(x, begin + rank, end, threads, 1, op);
  } else {
    using V = AlignedVector<T, Vec>;
    const V* xv = reinterpret_cast<const V*>(x);
    typename Op::acc_t a = op.identity();
    const int64_t vend = end / Vec;
    int64_t i = begin / Vec + rank;
    for (; i + 3 * threads < vend; i += 4 * threads) {
      V v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = xv[i + u * threads];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
#pragma unroll
        for (int k = 0; k < Vec; ++k) a = op.step(a, v[u].v[k], (i + u * threads) * Vec + k);
      }
    }
    for (; i < vend; i += threads) {
      const V v = xv[i];
#pragma unroll
      for (int k = 0; k < Vec; ++k) a = op.step(a, v.v[k], i * Vec + k);
    }
    const int64_t tail = vend * Vec + rank;
    if (tail < end) a = op.step(a, x[tail], tail);
    return a;
  }
}

// Columns m .. m + Vec - 1 (x points at column m of row 0, 16-byte aligned; pitch = M elements):
// a[k] folds rows begin, begin + stride, ... < end of column m + k in that order, four vectors
// in flight.
template <int Vec, typename T, typename Op>
__device__ __forceinline__ void columns_reduce(const T* __restrict__ x, int64_t begin, int64_t end, int64_t stride,
                                               int64_t pitch, const Op& op, typename Op::acc_t (&a)[Vec]) {
  using V = AlignedVector<T, Vec>;
  const V* xv = reinterpret_cast<const V*>(x);
  const int64_t vpitch = pitch / Vec;
  int64_t i = begin;
  for (; i + 3 * stride < end; i += 4 * stride) {
    V v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = xv[(i + u * stride) * vpitch];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
#pragma unroll
      for (int k = 0; k < Vec; ++k) a[k] = op.step(a[k], v[u].v[k], i + u * stride);
    }
  }
  for (; i < end; i += stride) {
    const V v = xv[i * vpitch];
#pragma unroll
    for (int k = 0; k < Vec; ++k) a[k] = op.step(a[k], v.v[k], i);
  }
}

// ---- the kernels ----

// One warp per row of N (<= kWarpRowMax) values.
template <typename T, typename Op, int Vec>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_rows_warp_kernel(const T* __restrict__ x, int64_t P, int64_t N, Op op) {
  const unsigned lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kReduceWarps;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kReduceWarps + threadIdx.x / 32; row < P; row += warps) {
    typename Op::acc_t a = row_chunk_reduce<Vec>(x + row * N, 0, N, lane, 32, op);
    a = warp_reduce(op, a);
    if (lane == 0) op.write(row, a);
  }
}

// One block per row (rows grid-strided over blockIdx.x); split s = blockIdx.y of gridDim.y
// covers indices [s * chunk, (s + 1) * chunk). One split writes the result, several write
// partial[row * splits + s].
template <typename T, typename Op, int Vec>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_rows_block_kernel(const T* __restrict__ x, int64_t P, int64_t N, int64_t chunk, Op op,
                             typename Op::acc_t* __restrict__ partial) {
  const int64_t splits = gridDim.y, s = blockIdx.y;
  const int64_t begin = s * chunk, end = begin + chunk < N ? begin + chunk : N;
  for (int64_t row = blockIdx.x; row < P; row += gridDim.x) {
    typename Op::acc_t a = row_chunk_reduce<Vec>(x + row * N, begin, end, threadIdx.x, kReduceThreads, op);
    a = block_reduce(op, a);
    if (threadIdx.x == 0) {
      if (partial) partial[row * splits + s] = a;
      else op.write(row, a);
    }
  }
}

// The second pass of split rows: row's partials, in split order over the threads, then the block.
template <typename Op>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_rows_finish_kernel(const typename Op::acc_t* __restrict__ partial, int64_t P, int64_t splits, Op op) {
  for (int64_t row = blockIdx.x; row < P; row += gridDim.x) {
    typename Op::acc_t a = op.identity();
    for (int64_t s = threadIdx.x; s < splits; s += kReduceThreads) a = op.combine(a, partial[row * splits + s]);
    a = block_reduce(op, a);
    if (threadIdx.x == 0) op.write(row, a);
  }
}

// Blocks of kColumnTile x kColumnLanes threads over tiles of 32 * Vec columns (tile t: p = t /
// tiles per p, columns from (t % tiles per p) * 32 * Vec); thread (c, l) folds rows l, l + 8, ...
// of its split for columns c * Vec .. c * Vec + Vec - 1 of the tile (M a multiple of Vec), the 8
// lanes are combined in order through shared memory. One split writes the results, several
// write partial[s * P * M + output].
template <typename T, typename Op, int Vec>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_columns_kernel(const T* __restrict__ x, int64_t P, int64_t N, int64_t M, int64_t chunk, Op op,
                          typename Op::acc_t* __restrict__ partial) {
  using A = typename Op::acc_t;
  __shared__ double raw[(kReduceThreads * Vec * sizeof(A) + sizeof(double) - 1) / sizeof(double)];
  A* shared = reinterpret_cast<A*>(raw);
  const int64_t tile_width = int64_t{kColumnTile} * Vec;
  const int64_t tiles_per_p = (M + tile_width - 1) / tile_width, tiles = P * tiles_per_p;
  const int64_t s = blockIdx.y, begin = s * chunk, end = begin + chunk < N ? begin + chunk : N;
  const unsigned slot = (threadIdx.y * kColumnTile + threadIdx.x) * Vec;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t p = t / tiles_per_p, m = (t % tiles_per_p) * tile_width + threadIdx.x * Vec;
    A a[Vec];
#pragma unroll
    for (int k = 0; k < Vec; ++k) a[k] = op.identity();
    if (m < M) {
      if constexpr (Vec == 1) a[0] = thread_reduce(x + p * N * M + m, begin + threadIdx.y, end, kColumnLanes, M, op);
      else columns_reduce<Vec>(x + p * N * M + m, begin + threadIdx.y, end, kColumnLanes, M, op, a);
    }
#pragma unroll
    for (int k = 0; k < Vec; ++k) shared[slot + k] = a[k];
    __syncthreads();
    if (threadIdx.y == 0 && m < M) {
      for (int l = 1; l < kColumnLanes; ++l) {
#pragma unroll
        for (int k = 0; k < Vec; ++k) a[k] = op.combine(a[k], shared[(l * kColumnTile + threadIdx.x) * Vec + k]);
      }
#pragma unroll
      for (int k = 0; k < Vec; ++k) {
        const int64_t o = p * M + m + k;
        if (partial) partial[s * P * M + o] = a[k];
        else op.write(o, a[k]);
      }
    }
    __syncthreads();
  }
}

// The second pass of split columns: one thread per output folds its splits in order.
template <typename Op>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_columns_finish_kernel(const typename Op::acc_t* __restrict__ partial, int64_t outputs, int64_t splits,
                                 Op op) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * kReduceThreads;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x; o < outputs; o += step) {
    typename Op::acc_t a = partial[o];
    for (int64_t s = 1; s < splits; ++s) a = op.combine(a, partial[s * outputs + o]);
    op.write(o, a);
  }
}

// launch_reduce's kernels with Vec elements per load.
template <int Vec, typename T, typename Op>
void launch_reduce_kernels(const ReduceGeometry& g, const T* x, typename Op::acc_t* partial, const Op& op,
                           cudaStream_t stream) {
  const int64_t P = g.outer, N = g.reduced, M = g.inner;
  switch (g.path) {
    case ReducePath::WarpPerRow:
      reduce_rows_warp_kernel<T, Op, Vec><<<g.grid_x, kReduceThreads, 0, stream>>>(x, P, N, op);
      ANATOMY_CUDA_LAUNCH_CHECK();
      break;
    case ReducePath::BlockPerRow:
      reduce_rows_block_kernel<T, Op, Vec>
          <<<dim3(g.grid_x, static_cast<unsigned>(g.splits)), kReduceThreads, 0, stream>>>(x, P, N, g.chunk, op,
                                                                                           partial);
      ANATOMY_CUDA_LAUNCH_CHECK();
      if (partial) {
        reduce_rows_finish_kernel<Op><<<g.grid_x, kReduceThreads, 0, stream>>>(partial, P, g.splits, op);
        ANATOMY_CUDA_LAUNCH_CHECK();
      }
      break;
    case ReducePath::Columns:
      reduce_columns_kernel<T, Op, Vec>
          <<<dim3(g.grid_x, static_cast<unsigned>(g.splits)), dim3(kColumnTile, kColumnLanes), 0, stream>>>(
              x, P, N, M, g.chunk, op, partial);
      ANATOMY_CUDA_LAUNCH_CHECK();
      if (partial) {
        const int64_t outputs = P * M;
        const unsigned grid =
            static_cast<unsigned>(std::clamp<int64_t>((outputs + kReduceThreads - 1) / kReduceThreads, 1, kMaxBlocks));
        reduce_columns_finish_kernel<Op><<<grid, kReduceThreads, 0, stream>>>(partial, outputs, g.splits, op);
        ANATOMY_CUDA_LAUNCH_CHECK();
      }
      break;
  }
}

// Runs op over the dense [P, N, M] `input` of T on `stream` along the geometry's path;
// `scratch` holds g.scratch_slots() slots. g.vec > 1 (16 / sizeof(T)) takes vector loads for an
// Op that allows them.
template <typename T, typename Op>
void launch_reduce(const ReduceGeometry& g, const void* input, void* scratch, const Op& op, cudaStream_t stream) {
  using A = typename Op::acc_t;
  static_assert(sizeof(A) <= kMaxAccBytes && std::is_trivially_copyable_v<A>);
  const T* x = static_cast<const T*>(input);
  A* partial = g.splits > 1 ? static_cast<A*>(scratch) : nullptr;
  constexpr int kVec = 16 / sizeof(T);
  if constexpr (VectorLoadOp<Op> && kVec > 1) {
    if (g.vec == kVec) {
      launch_reduce_kernels<kVec>(g, x, partial, op, stream);
      return;
    }
  }
  launch_reduce_kernels<1>(g, x, partial, op, stream);
}

// A launcher's answer to a dtype its family does not take (the host checks first; this is the
// internal backstop).
[[noreturn]] inline void reduce_dtype_error(const char* launcher) {
  detail::throw_cuda_error(cudaErrorInvalidValue, launcher, __FILE__, __LINE__);
}

}  // namespace anatomy::cuda
