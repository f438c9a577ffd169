// Fused CUDA backward kernels of layer_norm and rms_norm over rows of `n` trailing elements,
// with the arithmetic of the composite (dispatch/ops/nn_backward.cpp); fp16, bf16 and fp32
// compute in fp32, fp64 in fp64. gw = g * w (g without a weight):
//   layer_norm  xhat = (x - mean) * rstd (the forward's saved statistics)
//               dx = rstd * (gw - sum(gw) / n - xhat * sum(gw * xhat) / n)
//   rms_norm    r = 1 / sqrt(sum(x^2) / n + eps) (recomputed: the forward saves none), xhat = x r
//               dx = r * (gw - xhat * r * sum(gw * x) / n)
//   both        dw = sum over rows of g * xhat, db = sum over rows of g (layer_norm)
// Each row's two sums are one reduction (SumPair). Three shapes, as the forward's (norm.cu):
//   n <= 32 * kRowSlots              one warp per row, g and x held in registers (Note [Rows in
//                                    registers], row_kernel.cuh): each read once, dx written once
//   up to 512 threads' rows          one block per row, likewise (two rows of registers a
//                                    thread, plus the parameter sums: 1024-thread blocks spill)
//   longer                           one block per row, looping: a sum pass and a write pass
//
// Note [Deterministic parameter gradients]
//   dw and db are column sums over the rows. No float atomics: each block of the first kernel
//   sums its own rows' contributions, column by column, in a fixed order (its rows in turn; in
//   the warp-per-row kernel, then its warps in turn through shared memory) and writes them as
//   one row of a [blocks, n] scratch of partials; a second kernel sums each column's partials
//   in block order. The block count depends only on the shape (the grid is capped at
//   kPartialBlocks), so the result is the same bits from run to run.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/norm/launch.h"
#include "anatomy/backends/cuda/reduce/row_kernel.cuh"

namespace anatomy::cuda {
namespace {

inline constexpr int kBackwardBlockThreads = 512;  // the most threads of a row-in-registers block
inline constexpr int kLoopThreads = 512;
inline constexpr int64_t kPartialBlocks = 512;  // the most blocks when partials are written

template <typename T>
struct NormBackwardArgs {
  using A = opmath_t<T>;
  const T* g;
  const T* x;
  const T* w;     // null: no weight
  const T* mean;  // layer_norm only
  const T* rstd;  // layer_norm only
  T* dx;          // null: not wanted
  A* dw;          // partials [gridDim.x, n]; null: not wanted
  A* db;          // likewise
  int64_t rows, n;
  A eps;  // rms_norm
};

// A row's constants: xhat = (x - shift) * rstd, dx = rstd * (gw - c1 - xhat * c2).
template <typename A>
struct RowGrad {
  A shift = 0, rstd = 1, c1 = 0, c2 = 0;
};

// The row's sums' terms of one element: layer_norm (gw, gw * xhat), rms_norm (x^2, gw * x).
template <bool Rms, typename A>
__device__ __forceinline__ void add_terms(SumPair<A>& s, A g, A x, A w, const RowGrad<A>& r) {
  const A gw = g * w;
  if constexpr (Rms) {
    s.a += x * x;
    s.b += gw * x;
  } else {
    s.a += gw;
    s.b += gw * ((x - r.shift) * r.rstd);
  }
}

// The row's constants before its sums: layer_norm's saved statistics.
template <bool Rms, typename T, typename A>
__device__ __forceinline__ RowGrad<A> row_start(const NormBackwardArgs<T>& a, int64_t row) {
  RowGrad<A> r;
  if constexpr (!Rms) {
    r.shift = static_cast<A>(a.mean[row]);
    r.rstd = static_cast<A>(a.rstd[row]);
  }
  return r;
}

// ... and after them.
template <bool Rms, typename T, typename A>
__device__ __forceinline__ void row_finish(RowGrad<A>& r, SumPair<A> s, const NormBackwardArgs<T>& a) {
  const A n = static_cast<A>(a.n);
  if constexpr (Rms) {
    r.rstd = A(1) / sqrt(s.a / n + a.eps);
    r.c2 = r.rstd * (s.b / n);
  } else {
    r.c1 = s.a / n;
    r.c2 = s.b / n;
  }
}

template <typename A>
__device__ __forceinline__ A input_grad(A g, A x, A w, const RowGrad<A>& r) {
  const A xhat = (x - r.shift) * r.rstd;
  return r.rstd * ((g * w - r.c1) - xhat * r.c2);
}

// Vec weights from element e (ones without a weight).
template <int Vec, typename T, typename A>
__device__ __forceinline__ void load_weights(const T* w, int e, A* out) {
  if (w) {
    load_vector<Vec>(w + e, 0, out);
  } else {
#pragma unroll
    for (int k = 0; k < Vec; ++k) out[k] = A(1);
  }
}

// The parameter sums a thread keeps for its slots across the rows it visits (Params: wanted).
template <typename A, bool Params>
struct ParamSums {
  A dw[Params ? kRowSlots<A> : 1] = {}, db[Params ? kRowSlots<A> : 1] = {};
};

// Rows held in registers by a group (a warp or a block); each thread adds its slots' g * xhat and
// g to `p` (when Params).
template <typename T, int Vec, bool Rms, bool Params, typename Group>
__device__ __forceinline__ void norm_backward_rows(Group& grp, const NormBackwardArgs<T>& a,
                                                   ParamSums<opmath_t<T>, Params>& p) {
  using A = opmath_t<T>;
  using Regs = RowRegisters<T, A, Vec>;
  const int n = static_cast<int>(a.n), rank = grp.rank(), size = grp.size();
  for (int64_t row = grp.first_row(); row < a.rows; row += grp.row_step()) {
    Regs rg, rx;
    rg.load(a.g + row * a.n, n, rank, size, A(0));
    rx.load(a.x + row * a.n, n, rank, size, A(0));
    RowGrad<A> r = row_start<Rms, T, A>(a, row);
    SumPair<A> s{A(0), A(0)};
#pragma unroll
    for (int j = 0; j < Regs::kVectors; ++j) {
      const int e = Regs::first(j, rank, size);
      if (e < n) {
        A w[Vec];
        load_weights<Vec>(a.w, e, w);
#pragma unroll
        for (int k = 0; k < Vec; ++k) add_terms<Rms>(s, rg.v[j * Vec + k], rx.v[j * Vec + k], w[k], r);
      }
    }
    row_finish<Rms>(r, grp.all_reduce(AddPairOp<A>{}, s), a);
    T* out = a.dx ? a.dx + row * a.n : nullptr;
#pragma unroll
    for (int j = 0; j < Regs::kVectors; ++j) {
      const int e = Regs::first(j, rank, size);
      if (e < n) {
        A w[Vec], o[Vec];
        load_weights<Vec>(a.w, e, w);
#pragma unroll
        for (int k = 0; k < Vec; ++k) {
          const A g = rg.v[j * Vec + k], x = rx.v[j * Vec + k];
          o[k] = input_grad(g, x, w[k], r);
          if constexpr (Params) {
            p.dw[j * Vec + k] += g * ((x - r.shift) * r.rstd);
            p.db[j * Vec + k] += g;
          }
        }
        if (out) store_vector<Vec>(out + e, 0, o);
      }
    }
  }
}

// The thread's slots' sums into row `dst` of n partials (slots past the end skipped).
template <typename A, int Vec>
__device__ __forceinline__ void store_slots(A* dst, const A* sums, int n, int rank, int size) {
  using Regs = RowRegisters<float, A, Vec>;  // only its slot layout is used
#pragma unroll
  for (int j = 0; j < Regs::kVectors; ++j) {
    const int e = Regs::first(j, rank, size);
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      if (e + k < n) dst[e + k] = sums[j * Vec + k];
    }
  }
}

template <typename T, int Vec, bool Rms, bool Params>
__global__ void __launch_bounds__(kRowWarpsPerBlock * 32) norm_backward_warp_kernel(NormBackwardArgs<T> a) {
  using A = opmath_t<T>;
  WarpRowGroup grp;
  ParamSums<A, Params> p;
  norm_backward_rows<T, Vec, Rms, Params>(grp, a, p);
  if constexpr (Params) {
    // The block's warps' sums, added in warp order (Note [Deterministic parameter gradients]).
    __shared__ A warp_sums[kRowWarpsPerBlock][kWarpRowCapacity<A>];
    const int n = static_cast<int>(a.n), warp = static_cast<int>(threadIdx.x / 32);
    for (int q = 0; q < 2; ++q) {
      A* partial = q == 0 ? a.dw : a.db;
      if (partial == nullptr) continue;  // the same for every thread: no barrier is skipped by some
      store_slots<A, Vec>(warp_sums[warp], q == 0 ? p.dw : p.db, n, grp.rank(), 32);
      __syncthreads();
      for (int c = threadIdx.x; c < n; c += blockDim.x) {
        A sum = 0;
        for (int w = 0; w < kRowWarpsPerBlock; ++w) sum += warp_sums[w][c];
        partial[static_cast<int64_t>(blockIdx.x) * a.n + c] = sum;
      }
      __syncthreads();  // warp_sums is written again for the bias
    }
  }
}

template <typename T, int Vec, bool Rms, bool Params>
__global__ void __launch_bounds__(kBackwardBlockThreads, 1) norm_backward_block_kernel(NormBackwardArgs<T> a) {
  using A = opmath_t<T>;
  __shared__ double shared[2][64];
  BlockRowGroup grp{shared};
  ParamSums<A, Params> p;
  norm_backward_rows<T, Vec, Rms, Params>(grp, a, p);
  if constexpr (Params) {
    // Each column belongs to one thread of the block: its sums are the block's.
    const int n = static_cast<int>(a.n);
    if (a.dw) store_slots<A, Vec>(a.dw + static_cast<int64_t>(blockIdx.x) * a.n, p.dw, n, grp.rank(), grp.size());
    if (a.db) store_slots<A, Vec>(a.db + static_cast<int64_t>(blockIdx.x) * a.n, p.db, n, grp.rank(), grp.size());
  }
}

// Rows longer than a block holds in registers. Column i of the block's partial rows belongs to
// thread i % blockDim.x, which adds each row's term to it in place (no other thread touches it).
template <typename T, bool Rms>
__global__ void __launch_bounds__(kLoopThreads) norm_backward_loop_kernel(NormBackwardArgs<T> a) {
  using A = opmath_t<T>;
  __shared__ double shared[2][64];
  BlockRowGroup grp{shared};
  A* dw = a.dw ? a.dw + static_cast<int64_t>(blockIdx.x) * a.n : nullptr;
  A* db = a.db ? a.db + static_cast<int64_t>(blockIdx.x) * a.n : nullptr;
  for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
    if (dw) dw[i] = A(0);
    if (db) db[i] = A(0);
  }
  for (int64_t row = grp.first_row(); row < a.rows; row += grp.row_step()) {
    const T* gr = a.g + row * a.n;
    const T* xr = a.x + row * a.n;
    RowGrad<A> r = row_start<Rms, T, A>(a, row);
    SumPair<A> s{A(0), A(0)};
    for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
      const A w = a.w ? static_cast<A>(a.w[i]) : A(1);
      add_terms<Rms>(s, static_cast<A>(gr[i]), static_cast<A>(xr[i]), w, r);
    }
    row_finish<Rms>(r, grp.all_reduce(AddPairOp<A>{}, s), a);
    T* out = a.dx ? a.dx + row * a.n : nullptr;
    for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
      const A g = static_cast<A>(gr[i]), x = static_cast<A>(xr[i]);
      const A w = a.w ? static_cast<A>(a.w[i]) : A(1);
      if (out) out[i] = static_cast<T>(input_grad(g, x, w, r));
      if (dw) dw[i] += g * ((x - r.shift) * r.rstd);
      if (db) db[i] += g;
    }
  }
}

// Column c of `out` (n of them): the sum of column c of the [blocks, n] partials, in block order.
template <typename T>
__global__ void __launch_bounds__(kReduceThreads)
    sum_partials_kernel(const opmath_t<T>* __restrict__ partials, T* __restrict__ out, int64_t blocks, int64_t n) {
  using A = opmath_t<T>;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x;
  if (c >= n) return;
  A sum = 0;
  for (int64_t b = 0; b < blocks; ++b) sum += partials[b * n + c];
  out[c] = static_cast<T>(sum);
}

// The shape a launch takes, and its grid.
enum class Shape { Warp, Block, Loop };
struct Plan {
  Shape shape;
  unsigned grid;
  int threads;
};

template <typename T>
Plan plan_for(int64_t rows, int64_t n, bool vec, bool params) {
  using A = opmath_t<T>;
  const int64_t cap = params ? kPartialBlocks : kMaxBlocks;
  const int block_threads = row_block_threads<A>(n, vec ? kRowVec<T> : 1);
  if (n <= kWarpRowCapacity<A>) {
    const int64_t groups = (rows + kRowWarpsPerBlock - 1) / kRowWarpsPerBlock;
    return {Shape::Warp, static_cast<unsigned>(std::clamp<int64_t>(groups, 1, cap)), kRowWarpsPerBlock * 32};
  }
  const unsigned grid = static_cast<unsigned>(std::clamp<int64_t>(rows, 1, cap));
  if (n <= kBlockRowCapacity<A> && block_threads <= kBackwardBlockThreads) return {Shape::Block, grid, block_threads};
  return {Shape::Loop, grid, kLoopThreads};
}

template <typename T, int Vec, bool Rms, bool Params>
void launch_shape(const Plan& p, const NormBackwardArgs<T>& a, cudaStream_t stream) {
  if (p.shape == Shape::Warp) norm_backward_warp_kernel<T, Vec, Rms, Params><<<p.grid, p.threads, 0, stream>>>(a);
  else norm_backward_block_kernel<T, Vec, Rms, Params><<<p.grid, p.threads, 0, stream>>>(a);
}

template <typename T, bool Rms>
void launch_for(NormBackwardArgs<T> a, T* dw, T* db, void* partials, cudaStream_t stream) {
  using A = opmath_t<T>;
  constexpr int kVec = kRowVec<T>;
  const bool params = dw || db;
  const bool vec = row_vectorizable(a.n, kVec, {a.g, a.x, a.w, a.dx});
  const Plan p = plan_for<T>(a.rows, a.n, vec, params);
  A* scratch = static_cast<A*>(partials);
  a.dw = dw ? scratch : nullptr;
  a.db = db ? scratch + static_cast<int64_t>(p.grid) * a.n : nullptr;
  if (p.shape == Shape::Loop) {
    norm_backward_loop_kernel<T, Rms><<<p.grid, p.threads, 0, stream>>>(a);
  } else if (vec) {
    if (params) launch_shape<T, kVec, Rms, true>(p, a, stream);
    else launch_shape<T, kVec, Rms, false>(p, a, stream);
  } else {
    if (params) launch_shape<T, 1, Rms, true>(p, a, stream);
    else launch_shape<T, 1, Rms, false>(p, a, stream);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
  const unsigned column_blocks = static_cast<unsigned>((a.n + kReduceThreads - 1) / kReduceThreads);
  for (int q = 0; q < 2; ++q) {
    T* out = q == 0 ? dw : db;
    if (out == nullptr) continue;
    sum_partials_kernel<T><<<column_blocks, kReduceThreads, 0, stream>>>(q == 0 ? a.dw : a.db, out, p.grid, a.n);
    ANATOMY_CUDA_LAUNCH_CHECK();
  }
}

}  // namespace

int64_t norm_backward_partials(DType dtype, int64_t rows, int64_t cols, bool params) {
  if (!params) return 0;
  int64_t count = 0;
  const bool known = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      // The vectorized plan's grid is never smaller than the unvectorized one's: take the larger.
      const Plan a = plan_for<T>(rows, cols, true, true), b = plan_for<T>(rows, cols, false, true);
      count = 2 * static_cast<int64_t>(std::max(a.grid, b.grid)) * cols;
      return true;
    }
    return false;
  });
  if (!known) reduce_dtype_error("norm_backward_partials: not a floating dtype");
  return count;
}

void launch_norm_backward(NormBackwardKind kind, DType dtype, const NormBackwardBuffers& b, int64_t rows, int64_t cols,
                          double eps, cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      NormBackwardArgs<T> a{static_cast<const T*>(b.grad),
                            static_cast<const T*>(b.input),
                            static_cast<const T*>(b.weight),
                            static_cast<const T*>(b.mean),
                            static_cast<const T*>(b.rstd),
                            static_cast<T*>(b.grad_input),
                            nullptr,
                            nullptr,
                            rows,
                            cols,
                            static_cast<opmath_t<T>>(eps)};
      T* dw = static_cast<T*>(b.grad_weight);
      T* db = static_cast<T*>(b.grad_bias);
      if (kind == NormBackwardKind::Rms) launch_for<T, true>(a, dw, db, b.partials, stream);
      else launch_for<T, false>(a, dw, db, b.partials, stream);
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_norm_backward: not a floating dtype");
}

}  // namespace anatomy::cuda
