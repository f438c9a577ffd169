// Internal to channel_norm/: included by the room's own files only (its launcher header is
// launch.h).
// Device code only (included by the room's .cu files): the two passes batch_norm's forward and
// backward are made of.
//
//   channel sums   per channel c, sums of two terms of each element (x, dy) against a per-channel
//                  center m[c]: the statistics' (x - m, (x - m)^2) with m a value of the channel
//                  (shifted sums: as accurate as a two-pass variance while m is within the
//                  data's spread), the backward's (dy, dy (x - m)) with m the mean. Each block
//                  writes partial sums for one split of the rows; a per-channel finalize adds
//                  the splits in a fixed order (deterministic, no atomics). The forward's m is
//                  each channel's first element, read by the sums kernels themselves and written
//                  out for the finalize by the blocks of the first split (Centers): no launch of
//                  its own.
//     channels_last (N*S rows of C contiguous values): a column reduction. A warp reads V
//                  consecutive channels per thread of one row (16-byte loads), the 8 warps of a
//                  block take 8 rows at a time, a grid of (C / (32 V), splits) covers the rows.
//     contiguous   (N planes of S contiguous values per channel): a block per (channel, split
//                  of the batch), threads along the plane.
//   apply          out = (x - m[c]) k1[c] + k0[c] (+ dy k2[c]), element-wise, V elements a thread;
//                  with channels innermost, each thread keeps the same channels' coefficients in
//                  registers over a grid-stride loop.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "anatomy/backends/cuda/channel_norm/launch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device_limits.h"
#include "anatomy/dispatch/ops/elementwise_scalar.h"

namespace anatomy::cuda::channel_norm {

using elementwise::is_floating_v;
using elementwise::opmath_t;

inline constexpr int kColThreads = 32;  // threads along C (channels_last)
inline constexpr int kRowThreads = 8;   // rows a block reads at a time (channels_last)
inline constexpr int kPlaneThreads = 256;
inline constexpr int64_t kTargetBlocks = 1024;

template <typename A>
struct Terms2 {
  A a, b;
};

// The statistics' terms: x - m and its square.
struct StatTerms {
  template <typename A>
  __device__ __forceinline__ Terms2<A> operator()(A x, A, A m) const {
    const A d = x - m;
    return {d, d * d};
  }
};
// The backward's: dy and dy (x - mean).
struct GradTerms {
  template <typename A>
  __device__ __forceinline__ Terms2<A> operator()(A x, A dy, A m) const {
    return {dy, dy * (x - m)};
  }
};

// Elements per thread: 16 bytes when every row (channels_last: C; contiguous: S) is a multiple
// of it and the pointers are aligned, else 1.
template <typename T>
inline constexpr int kVec = 16 / sizeof(T);

template <typename T>
bool vectorizable(int64_t row, std::initializer_list<const void*> ptrs) {
  if (row % kVec<T> != 0) return false;
  for (const void* p : ptrs) {
    if (p != nullptr && reinterpret_cast<uintptr_t>(p) % (kVec<T> * sizeof(T)) != 0) return false;
  }
  return true;
}

// The number of row splits each channel's sums come in, for about kTargetBlocks blocks (depends
// on the shape and the element size only, so the scratch size and the launch agree).
inline int64_t splits_of(const ChannelShape& s, int64_t element_size) {
  if (s.channels_last) {
    const int64_t per_block = kColThreads * (16 / element_size);
    const int64_t col_blocks = (s.C + per_block - 1) / per_block;
    return std::clamp<int64_t>((s.N * s.S + 31) / 32, 1, std::max<int64_t>(1, kTargetBlocks / col_blocks));
  }
  return std::clamp<int64_t>((kTargetBlocks + s.C - 1) / s.C, 1, s.N);
}

template <int V, typename T>
__device__ __forceinline__ void load(T (&out)[V], const T* p) {
  if constexpr (V == 1) {
    out[0] = *p;
  } else {
    const AlignedVector<T, V> v = *reinterpret_cast<const AlignedVector<T, V>*>(p);
#pragma unroll
    for (int i = 0; i < V; ++i) out[i] = v.v[i];
  }
}

// The sums' per-channel center m[c]: `values` when given (the backward's mean), else the
// channel's first element of x, which the blocks of split 0 also store in `first_out`.
template <typename A>
struct Centers {
  const A* values;
  A* first_out;
};

// Channels innermost: partial sums of rows [split * 8 .. step 8 * splits) of each channel.
template <typename T, int V, bool HasDy, typename F>
__global__ void __launch_bounds__(kColThreads* kRowThreads)
    column_sums_kernel(const T* x, const T* dy, Centers<opmath_t<T>> center, opmath_t<T>* part_a, opmath_t<T>* part_b,
                       int64_t rows, int64_t C, F terms) {
  using A = opmath_t<T>;
  __shared__ A sa[kRowThreads][kColThreads * V];
  __shared__ A sb[kRowThreads][kColThreads * V];
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * kColThreads + threadIdx.x) * V;
  A acc_a[V], acc_b[V], m[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    acc_a[v] = A(0);
    acc_b[v] = A(0);
    if (c0 + v >= C) {
      m[v] = A(0);
    } else if (center.values != nullptr) {
      m[v] = center.values[c0 + v];
    } else {
      m[v] = static_cast<A>(x[c0 + v]);  // row 0's element of channel c0 + v
      if (blockIdx.y == 0 && threadIdx.y == 0) center.first_out[c0 + v] = m[v];
    }
  }
  if (c0 < C) {
#pragma unroll 4
    for (int64_t r = static_cast<int64_t>(blockIdx.y) * kRowThreads + threadIdx.y; r < rows;
         r += static_cast<int64_t>(gridDim.y) * kRowThreads) {
      T xv[V], gv[V];
      load<V>(xv, x + r * C + c0);
      if constexpr (HasDy) load<V>(gv, dy + r * C + c0);
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const Terms2<A> t = terms(static_cast<A>(xv[v]), HasDy ? static_cast<A>(gv[v]) : A(0), m[v]);
        acc_a[v] += t.a;
        acc_b[v] += t.b;
      }
    }
  }
#pragma unroll
  for (int v = 0; v < V; ++v) {
    sa[threadIdx.y][threadIdx.x * V + v] = acc_a[v];
    sb[threadIdx.y][threadIdx.x * V + v] = acc_b[v];
  }
  __syncthreads();
  if (threadIdx.y != 0) return;
#pragma unroll
  for (int v = 0; v < V; ++v) {
    if (c0 + v >= C) break;
    A a = A(0), b = A(0);
    for (int y = 0; y < kRowThreads; ++y) {
      a += sa[y][threadIdx.x * V + v];
      b += sb[y][threadIdx.x * V + v];
    }
    part_a[static_cast<int64_t>(blockIdx.y) * C + c0 + v] = a;
    part_b[static_cast<int64_t>(blockIdx.y) * C + c0 + v] = b;
  }
}

// Contiguous: block (c, split) sums channel c's planes n = split, split + splits, ...
template <typename T, int V, bool HasDy, typename F>
__global__ void __launch_bounds__(kPlaneThreads)
    plane_sums_kernel(const T* x, const T* dy, Centers<opmath_t<T>> center, opmath_t<T>* part_a, opmath_t<T>* part_b,
                      int64_t N, int64_t C, int64_t S, F terms) {
  using A = opmath_t<T>;
  __shared__ A sa[kPlaneThreads];
  __shared__ A sb[kPlaneThreads];
  const int64_t c = blockIdx.x;
  const A m = center.values != nullptr ? center.values[c] : static_cast<A>(x[c * S]);  // plane 0's first
  if (center.values == nullptr && blockIdx.y == 0 && threadIdx.x == 0) center.first_out[c] = m;
  A a = A(0), b = A(0);
  for (int64_t n = blockIdx.y; n < N; n += gridDim.y) {
    const int64_t base = (n * C + c) * S;
    for (int64_t s = static_cast<int64_t>(threadIdx.x) * V; s < S; s += static_cast<int64_t>(kPlaneThreads) * V) {
      T xv[V], gv[V];
      load<V>(xv, x + base + s);
      if constexpr (HasDy) load<V>(gv, dy + base + s);
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const Terms2<A> t = terms(static_cast<A>(xv[v]), HasDy ? static_cast<A>(gv[v]) : A(0), m);
        a += t.a;
        b += t.b;
      }
    }
  }
  sa[threadIdx.x] = a;
  sb[threadIdx.x] = b;
  __syncthreads();
  for (int half = kPlaneThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sa[threadIdx.x] += sa[threadIdx.x + half];
      sb[threadIdx.x] += sb[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    part_a[static_cast<int64_t>(blockIdx.y) * C + c] = sa[0];
    part_b[static_cast<int64_t>(blockIdx.y) * C + c] = sb[0];
  }
}

// The partial sums of each channel into part_a / part_b (splits_of(shape) rows of C each).
template <typename T, bool HasDy, typename F>
void launch_channel_sums(const ChannelShape& s, const T* x, const T* dy, Centers<opmath_t<T>> center,
                         opmath_t<T>* part_a, opmath_t<T>* part_b, F terms, cudaStream_t stream) {
  constexpr int V = kVec<T>;
  const int64_t splits = splits_of(s, sizeof(T));
  if (s.channels_last) {
    const bool vec = vectorizable<T>(s.C, {x, dy});
    const int per_block = kColThreads * (vec ? V : 1);
    const dim3 grid(static_cast<unsigned>((s.C + per_block - 1) / per_block), static_cast<unsigned>(splits));
    const dim3 block(kColThreads, kRowThreads);
    if (vec)
      column_sums_kernel<T, V, HasDy><<<grid, block, 0, stream>>>(x, dy, center, part_a, part_b, s.N * s.S, s.C, terms);
    else
      column_sums_kernel<T, 1, HasDy><<<grid, block, 0, stream>>>(x, dy, center, part_a, part_b, s.N * s.S, s.C, terms);
  } else {
    const dim3 grid(static_cast<unsigned>(s.C), static_cast<unsigned>(splits));
    if (vectorizable<T>(s.S, {x, dy})) {
      plane_sums_kernel<T, V, HasDy>
          <<<grid, kPlaneThreads, 0, stream>>>(x, dy, center, part_a, part_b, s.N, s.C, s.S, terms);
    } else {
      plane_sums_kernel<T, 1, HasDy>
          <<<grid, kPlaneThreads, 0, stream>>>(x, dy, center, part_a, part_b, s.N, s.C, s.S, terms);
    }
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

// Block (32, kCombineLanes) of a per-channel finalize: channel blockIdx.x * 32 + threadIdx.x
// gets the sum of its splits' partial sums, lane y adding splits y, y + 8, ..., then lane 0 the
// lanes in order (deterministic). Every thread of the block calls it; the totals are lane 0's.
inline constexpr int kCombineLanes = 8;
template <typename A>
__device__ Terms2<A> combine_splits(const A* part_a, const A* part_b, int64_t C, int64_t splits) {
  __shared__ A sa[kCombineLanes][32];
  __shared__ A sb[kCombineLanes][32];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  A a = A(0), b = A(0);
  if (c < C) {
#pragma unroll 4
    for (int64_t k = threadIdx.y; k < splits; k += kCombineLanes) {
      a += part_a[k * C + c];
      b += part_b[k * C + c];
    }
  }
  sa[threadIdx.y][threadIdx.x] = a;
  sb[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  Terms2<A> t{A(0), A(0)};
  if (threadIdx.y == 0) {
    for (int y = 0; y < kCombineLanes; ++y) {
      t.a += sa[y][threadIdx.x];
      t.b += sb[y][threadIdx.x];
    }
  }
  return t;
}

inline dim3 finalize_grid(int64_t C) { return dim3(static_cast<unsigned>((C + 31) / 32)); }
inline dim3 finalize_block() { return dim3(32, kCombineLanes); }

// The per-channel coefficients of `apply`: rows of C values.
template <typename A>
struct Coefficients {
  const A* m;
  const A* k1;
  const A* k0;
  const A* k2;  // null: no dy term
};

// out = (x - m[c]) k1[c] + k0[c] (+ dy k2[c]); V elements a thread share a channel (contiguous:
// S % V == 0) or take V consecutive channels (channels_last: C % V == 0).
template <typename T, int V, bool ChannelsLast, bool HasDy>
__global__ void apply_kernel(const T* x, const T* dy, T* out, Coefficients<opmath_t<T>> k, int64_t n, int64_t C,
                             int64_t S) {
  using A = opmath_t<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V; i < n; i += step) {
    T xv[V], gv[V], ov[V];
    load<V>(xv, x + i);
    if constexpr (HasDy) load<V>(gv, dy + i);
    const int64_t c0 = ChannelsLast ? i % C : (i / S) % C;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const int64_t c = ChannelsLast ? c0 + v : c0;
      A o = (static_cast<A>(xv[v]) - k.m[c]) * k.k1[c] + k.k0[c];
      if constexpr (HasDy) o += static_cast<A>(gv[v]) * k.k2[c];
      ov[v] = static_cast<T>(o);
    }
    if constexpr (V == 1) {
      out[i] = ov[0];
    } else {
      AlignedVector<T, V> o;
#pragma unroll
      for (int v = 0; v < V; ++v) o.v[v] = ov[v];
      *reinterpret_cast<AlignedVector<T, V>*>(out + i) = o;
    }
  }
}

// Channels innermost, on a grid whose step is a multiple of C: each thread meets the same V
// channels on every iteration, so it reads their coefficients once. (apply_kernel reads three or
// four per element, each a scattered load: with channels innermost that made it L1-bound, at
// about 40% of the memory bandwidth.)
template <typename T, int V, bool HasDy>
__global__ void __launch_bounds__(kBlockThreads)
    apply_channels_last_kernel(const T* x, const T* dy, T* out, Coefficients<opmath_t<T>> k, int64_t n, int64_t C) {
  using A = opmath_t<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  const int64_t c0 = first % C;
  A m[V], k1[V], k0[V], k2[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    m[v] = k.m[c0 + v];
    k1[v] = k.k1[c0 + v];
    k0[v] = k.k0[c0 + v];
    k2[v] = HasDy ? k.k2[c0 + v] : A(0);
  }
#pragma unroll 2
  for (int64_t i = first; i < n; i += step) {
    T xv[V], gv[V];
    load<V>(xv, x + i);
    if constexpr (HasDy) load<V>(gv, dy + i);
    AlignedVector<T, V> o;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      A r = (static_cast<A>(xv[v]) - m[v]) * k1[v] + k0[v];
      if constexpr (HasDy) r += static_cast<A>(gv[v]) * k2[v];
      o.v[v] = static_cast<T>(r);
    }
    if constexpr (V == 1) out[i] = o.v[0];
    else *reinterpret_cast<AlignedVector<T, V>*>(out + i) = o;
  }
}

// Blocks of apply_channels_last_kernel: enough to fill the device once (every SM's resident
// threads), a whole number of channel rows per step; 0 when no such grid exists (C neither
// divides nor is a multiple of a block's elements).
inline unsigned channels_last_apply_grid(int64_t n, int64_t C, int V, const DeviceLimits& device) {
  const int64_t per_block = int64_t{kBlockThreads} * V;
  const int64_t resident_blocks =
      int64_t{device.multiprocessors} * std::max(device.max_threads_per_multiprocessor / kBlockThreads, 1);
  int64_t blocks = std::min<int64_t>((n + per_block - 1) / per_block, resident_blocks);
  if (per_block % C != 0) {
    if (C % per_block != 0) return 0;
    const int64_t unit = C / per_block;
    blocks = (blocks + unit - 1) / unit * unit;
  }
  return blocks > kMaxBlocks ? 0 : static_cast<unsigned>(std::max<int64_t>(blocks, 1));
}

template <typename T, int V, bool HasDy>
void launch_apply_for(const ChannelShape& s, const T* x, const T* dy, T* out, Coefficients<opmath_t<T>> k,
                      cudaStream_t stream) {
  const int64_t n = s.N * s.C * s.S;
  const unsigned rows_grid = s.channels_last ? channels_last_apply_grid(n, s.C, V, current_device_limits()) : 0;
  const unsigned grid = grid_blocks(n / V);
  if (rows_grid > 0)
    apply_channels_last_kernel<T, V, HasDy><<<rows_grid, kBlockThreads, 0, stream>>>(x, dy, out, k, n, s.C);
  else if (s.channels_last)
    apply_kernel<T, V, true, HasDy><<<grid, kBlockThreads, 0, stream>>>(x, dy, out, k, n, s.C, s.S);
  else apply_kernel<T, V, false, HasDy><<<grid, kBlockThreads, 0, stream>>>(x, dy, out, k, n, s.C, s.S);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

template <typename T, bool HasDy>
void launch_apply(const ChannelShape& s, const T* x, const T* dy, T* out, Coefficients<opmath_t<T>> k,
                  cudaStream_t stream) {
  if (vectorizable<T>(s.channels_last ? s.C : s.S, {x, dy, out}))
    launch_apply_for<T, kVec<T>, HasDy>(s, x, dy, out, k, stream);
  else launch_apply_for<T, 1, HasDy>(s, x, dy, out, k, stream);
}

}  // namespace anatomy::cuda::channel_norm
