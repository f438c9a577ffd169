// A building block reduce/ shares with norm/, softmax/ and loss/ (not a launcher: the room's is
// launch.h).
// The building blocks of the CUDA kernels that hold one contiguous row in registers while they
// reduce it and write it (softmax.cu, norm.cu): the row is read from memory once, with 16-byte
// vector loads where the row's pointer and length allow, reduced across a group of threads (one
// warp, or one block of up to 1024) in a fixed order, and written once.
//
// Note [Rows in registers]
//   Each thread of a group holds kRowSlots<A> values of the computation type A (64 bytes: 16
//   floats or 8 doubles) as kRowSlots / Vec vectors of Vec elements. Vector j of thread `rank`
//   in a group of `size` threads holds elements (j * size + rank) * Vec ... + Vec - 1, so every
//   load instruction of a warp reads consecutive 16-byte words. A warp holds rows of up to
//   32 * kRowSlots values, a block of 1024 threads rows of up to 1024 * kRowSlots (16384 floats,
//   8192 doubles); longer rows take the families' looping kernels. Vec > 1 needs a row length
//   that is a multiple of Vec and 16-byte aligned pointers (row_vectorizable), so every row
//   starts aligned and no vector straddles the row's end.
//   A group's reductions end with every thread holding the same bits: each warp reduces the
//   same partials in the same order, and a warp's result is lane 0's, broadcast.
//
// Device code only: included by .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "anatomy/backends/cuda/common/hardware_convert.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/reduce/reduce.cuh"

namespace anatomy::cuda {

inline constexpr int kRowMaxThreads = 1024;
inline constexpr int kRowWarpsPerBlock = 8;  // rows per block of the warp-per-row kernels

template <typename A>
inline constexpr int kRowSlots = 64 / static_cast<int>(sizeof(A));

template <typename T>
inline constexpr int kRowVec = 16 / static_cast<int>(sizeof(T));

template <typename A>
inline constexpr int64_t kWarpRowCapacity = int64_t{32} * kRowSlots<A>;
template <typename A>
inline constexpr int64_t kBlockRowCapacity = int64_t{kRowMaxThreads} * kRowSlots<A>;

// Whether rows of n elements can be moved in vectors of `vec`: n a multiple of vec and every
// pointer (null ones aside: absent operands) 16-byte aligned.
inline bool row_vectorizable(int64_t n, int vec, std::initializer_list<const void*> pointers) {
  if (vec <= 1 || n % vec != 0) return false;
  for (const void* p : pointers) {
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  }
  return true;
}

// Threads of a block holding rows of n (<= kBlockRowCapacity<A>) elements: enough for every
// vector to have a slot, in whole warps.
template <typename A>
inline int row_block_threads(int64_t n, int vec) {
  const int64_t vectors = (n + vec - 1) / vec, per_thread = kRowSlots<A> / vec;
  const int64_t warps = (vectors + per_thread * 32 - 1) / (per_thread * 32);
  return static_cast<int>(std::clamp<int64_t>(warps * 32, 32, kRowMaxThreads));
}

inline unsigned row_grid(int64_t groups) { return static_cast<unsigned>(std::clamp<int64_t>(groups, 1, kMaxBlocks)); }

// Any trivially copyable value moved between lanes a 32-bit word at a time by shfl(word).
template <typename A, typename Shfl>
__device__ __forceinline__ A shfl_words(const A& v, Shfl&& shfl) {
  constexpr int kWords = (sizeof(A) + 3) / 4;
  unsigned w[kWords] = {};
  memcpy(w, &v, sizeof(A));
#pragma unroll
  for (int i = 0; i < kWords; ++i) w[i] = shfl(w[i]);
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}

// __shfl_sync of any trivially copyable value from lane `src`.
template <typename A>
__device__ __forceinline__ A shfl_from(const A& v, int src) {
  return shfl_words(v, [src](unsigned w) { return __shfl_sync(0xffffffffu, w, src); });
}

// The value lane + 1 holds (every lane of the warp calls it; lane 31 gets its own back).
template <typename A>
__device__ __forceinline__ A shfl_down_one(const A& v) {
  return shfl_words(v, [](unsigned w) { return __shfl_down_sync(0xffffffffu, w, 1); });
}

// Two sums reduced together (one shuffle tree, one barrier).
template <typename A>
struct SumPair {
  A a, b;
};
template <typename A>
struct AddPairOp {
  __device__ SumPair<A> identity() const { return {A(0), A(0)}; }
  __device__ SumPair<A> combine(SumPair<A> x, SumPair<A> y) const { return {x.a + y.a, x.b + y.b}; }
};
template <typename A>
struct AddValueOp {
  __device__ A identity() const { return A(0); }
  __device__ A combine(A a, A b) const { return a + b; }
};

// One warp per row: warp w of the block takes rows blockIdx.x * kRowWarpsPerBlock + w, then
// every gridDim.x * kRowWarpsPerBlock-th.
struct WarpRowGroup {
  __device__ int rank() const { return static_cast<int>(threadIdx.x % 32); }
  __device__ int size() const { return 32; }
  __device__ int64_t first_row() const {
    return static_cast<int64_t>(blockIdx.x) * kRowWarpsPerBlock + threadIdx.x / 32;
  }
  __device__ int64_t row_step() const { return static_cast<int64_t>(gridDim.x) * kRowWarpsPerBlock; }
  template <typename Op, typename A>
  __device__ A all_reduce(const Op& op, A a) {
    return shfl_from(warp_reduce(op, a), 0);
  }
};

// One block (blockDim.x a multiple of 32, at most 1024) per row: block b takes rows b, then
// every gridDim.x-th. `shared` is two buffers of 32 partials of up to 16 bytes, used in turn, so
// that a reduction's barrier also orders the previous reduction's reads of the other buffer
// before that buffer is written again; no barrier is needed between rows.
struct BlockRowGroup {
  double (*shared)[64];
  unsigned turn = 0;
  __device__ int rank() const { return static_cast<int>(threadIdx.x); }
  __device__ int size() const { return static_cast<int>(blockDim.x); }
  __device__ int64_t first_row() const { return blockIdx.x; }
  __device__ int64_t row_step() const { return gridDim.x; }
  template <typename Op, typename A>
  __device__ A all_reduce(const Op& op, A a) {
    static_assert(sizeof(A) <= 16);
    A* partials = reinterpret_cast<A*>(shared[turn]);
    turn ^= 1u;
    const unsigned lane = threadIdx.x % 32, warps = blockDim.x / 32;
    a = warp_reduce(op, a);
    if (lane == 0) partials[threadIdx.x / 32] = a;
    __syncthreads();
    a = lane < warps ? partials[lane] : op.identity();
    return shfl_from(warp_reduce(op, a), 0);
  }
};

// Vec consecutive elements of p from element e, as A (one 16-byte load when Vec > 1). fp16 and
// bf16 convert by the hardware's instructions here and in store_vector (Note [Hardware
// conversions]): a row kernel's conversions are a large part of its instructions.
template <int Vec, typename T, typename A>
__device__ __forceinline__ void load_vector(const T* __restrict__ p, int e, A* out) {
  if constexpr (Vec > 1) {
    const AlignedVector<T, Vec> w = *reinterpret_cast<const AlignedVector<T, Vec>*>(p + e);
#pragma unroll
    for (int k = 0; k < Vec; ++k) out[k] = to_compute<A>(w.v[k]);
  } else {
    out[0] = to_compute<A>(p[e]);
  }
}

template <int Vec, typename T, typename A>
__device__ __forceinline__ void store_vector(T* __restrict__ p, int e, const A* in) {
  if constexpr (Vec > 1) {
    AlignedVector<T, Vec> w;
#pragma unroll
    for (int k = 0; k < Vec; ++k) w.v[k] = from_compute<T>(in[k]);
    *reinterpret_cast<AlignedVector<T, Vec>*>(p + e) = w;
  } else {
    p[0 + e] = from_compute<T>(in[0]);
  }
}

// Note [Shifted rows]
//   A row that starts off a 16-byte boundary (x[:, 1:] of a contiguous matrix, whose output rows
//   of an odd length start anywhere too) would take scalar loads and stores, four or eight times
//   the memory instructions, each writing parts of sectors. Instead the row's vectors follow its
//   output's alignment: a thread's vector starts `head` elements before a multiple of Vec, so its
//   store is one aligned 16-byte store (scalar only at the row's two ends), and each load reads
//   the one or two aligned vectors that hold its elements and shifts them into place (the shift is
//   the same for every thread of the row: a uniform branch, no divergence). Aligned vectors that
//   hold none of the row's elements are not read, so no load leaves the row's 16-byte words.
//   The shift is chosen once per row (with_shift), not once per vector: a branch per vector costs
//   the bf16 block kernel 3 registers and 96 bytes of spill, and c01's layer_norm of x[:, 1:] runs
//   slower that way; capping the kernel at 48 or 40 registers (more blocks an SM) is no faster
//   (docs/perf.md, "The split product's remainder over shared rows, one shift per row").

// Vec (> 1) elements of p from element e, where p + e lies Shift elements past a 16-byte boundary
// (p 16-byte aligned modulo whole elements), those outside [0, n) unread and unspecified (Note
// [Shifted rows]).
// out[k] = element k + Shift of the aligned vectors lo, hi taken end to end.
template <int Vec, int Shift, typename T, typename A>
__device__ __forceinline__ void shift_into(const AlignedVector<T, Vec>& lo, const AlignedVector<T, Vec>& hi, A* out) {
#pragma unroll
  for (int k = 0; k < Vec; ++k) out[k] = to_compute<A>(k + Shift < Vec ? lo.v[k + Shift] : hi.v[k + Shift - Vec]);
}

template <int Vec, int Shift, typename T, typename A>
__device__ __forceinline__ void load_shifted_by(const T* __restrict__ p, int64_t e, int64_t n, A* out) {
  static_assert(Vec > 1 && Shift >= 0 && Shift < Vec);
  const int64_t first = e - Shift;  // the first aligned vector's first element
  AlignedVector<T, Vec> lo{}, hi{};
  if (first + Vec > 0 && first < n) lo = *reinterpret_cast<const AlignedVector<T, Vec>*>(p + first);
  if constexpr (Shift > 0) {
    if (first + 2 * Vec > 0 && first + Vec < n) hi = *reinterpret_cast<const AlignedVector<T, Vec>*>(p + first + Vec);
  }
  shift_into<Vec, Shift>(lo, hi, out);
}

// f.template operator()<S>() for S == shift (0 <= shift < Vec): one branch where the shift is the
// same for a whole row, rather than one per vector.
template <int Vec, int S = 0, typename F>
__device__ __forceinline__ void with_shift(int shift, F&& f) {
  if constexpr (S < Vec) {
    if (shift == S) f.template operator()<S>();
    else with_shift<Vec, S + 1>(shift, f);
  }
}

// The same for p + e anywhere.
template <int Vec, typename T, typename A>
__device__ __forceinline__ void load_shifted(const T* __restrict__ p, int64_t e, int64_t n, A* out) {
  const int shift = static_cast<int>((reinterpret_cast<uintptr_t>(p + e) % 16) / sizeof(T));
  with_shift<Vec>(shift, [&]<int S>() { load_shifted_by<Vec, S>(p, e, n, out); });
}

// in[0 .. Vec) to p[e ...] (p + e 16-byte aligned), those of elements outside [0, n) left out.
template <int Vec, typename T, typename A>
__device__ __forceinline__ void store_shifted(T* __restrict__ p, int64_t e, int64_t n, const A* in) {
  if (e >= 0 && e + Vec <= n) return store_vector<Vec>(p + e, 0, in);
#pragma unroll
  for (int k = 0; k < Vec; ++k) {
    if (e + k >= 0 && e + k < n) p[e + k] = from_compute<T>(in[k]);
  }
}

// Elements of p before its first 16-byte boundary, counted back from it: p - head is aligned.
template <typename T>
__device__ __forceinline__ int misaligned_elements(const T* p) {
  return static_cast<int>((reinterpret_cast<uintptr_t>(p) % 16) / sizeof(T));
}

// One thread's share of a row (Note [Rows in registers]).
template <typename T, typename A, int Vec>
struct RowRegisters {
  static_assert(kRowSlots<A> % Vec == 0);
  static constexpr int kVectors = kRowSlots<A> / Vec;
  A v[kRowSlots<A>];

  // The first element of the thread's vector j.
  __device__ static int first(int j, int rank, int size) { return (j * size + rank) * Vec; }

  // Loads the thread's vectors of row (n elements, `stride` apart: 1 whenever Vec > 1); slots
  // past the end hold `fill`.
  __device__ void load(const T* __restrict__ row, int n, int rank, int size, A fill, int64_t stride = 1) {
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      const int e = first(j, rank, size);
      if (e < n) {
        if constexpr (Vec == 1) v[j] = to_compute<A>(row[e * stride]);
        else load_vector<Vec>(row, e, v + j * Vec);
      } else {
#pragma unroll
        for (int k = 0; k < Vec; ++k) v[j * Vec + k] = fill;
      }
    }
  }

  // The thread's vectors of a row of n elements whose vector j starts at element
  // first(j) - head (Note [Shifted rows]); slots of elements outside [0, n) are unspecified.
  // Each aligned vector of the row is read once: a thread's vector j needs the aligned vector
  // after its own, which the next lane read as its own (ranks r and r + 1 hold adjacent vectors),
  // so it comes by a shuffle; the warp's last lane, whose neighbour is another warp's (or the next
  // j's), reads it. All 32 lanes of the warp must call this together. (Reading both aligned
  // vectors in every lane, the second an L1 hit mostly, is slower for fp32 8192's sliced
  // LayerNorm: docs/perf.md, "The split product's remainder over shared rows, one shift per row".)
  __device__ void load_shifted_row(const T* __restrict__ row, int n, int head, int rank, int size) {
    // Every vector of the row starts the same number of elements past a 16-byte boundary.
    const int shift = static_cast<int>(((reinterpret_cast<uintptr_t>(row) - head * sizeof(T)) % 16) / sizeof(T));
    const bool last_lane = threadIdx.x % 32 == 31;
    using V = AlignedVector<T, Vec>;
    with_shift<Vec>(shift, [&]<int S>() {
#pragma unroll
      for (int j = 0; j < kVectors; ++j) {
        const int e = first(j, rank, size) - head, f = e - S;  // f: the aligned vector's first element
        V lo{}, hi{};
        if (f + Vec > 0 && f < n) lo = *reinterpret_cast<const V*>(row + f);
        if constexpr (S > 0) {
          hi = shfl_down_one(lo);
          if (last_lane) {
            hi = V{};
            if (f + 2 * Vec > 0 && f + Vec < n) hi = *reinterpret_cast<const V*>(row + f + Vec);
          }
        }
        if (e < n) shift_into<Vec, S>(lo, hi, v + j * Vec);
      }
    });
  }

  // f(slot) for each slot that holds an element of such a row, in slot order.
  template <typename F>
  __device__ void for_each_shifted(int n, int head, int rank, int size, F&& f) {
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      const int e = first(j, rank, size) - head;
#pragma unroll
      for (int k = 0; k < Vec; ++k) {
        if (e + k >= 0 && e + k < n) f(v[j * Vec + k]);
      }
    }
  }

  // f(slot) for each slot that holds an element, in slot order (f may change the value).
  template <typename F>
  __device__ void for_each(int n, int rank, int size, F&& f) {
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      if (first(j, rank, size) < n) {
#pragma unroll
        for (int k = 0; k < Vec; ++k) f(v[j * Vec + k]);
      }
    }
  }
};

}  // namespace anatomy::cuda
