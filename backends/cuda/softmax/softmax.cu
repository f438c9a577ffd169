// CUDA kernels of softmax and log_softmax along one dim of a contiguous [P, N, M] block, with the
// CPU's arithmetic (backends/cpu/softmax_cpu.cpp): the max along the dim (std::max's rule, which
// skips a NaN that is not first), the sum of exp(x - max), then exp(x - max) / sum or
// (x - max) - log(sum); fp16/bf16 in fp32 (CUDA's accurate exp, not __expf). Four shapes:
//   M == 1, N <= 32 * kRowSlots     one warp per row, the row held in registers (Note [Rows in
//                                   registers], row_kernel.cuh): one read, one write, 16-byte
//                                   vectors where the row allows
//   M == 1, N <= 1024 * kRowSlots   one block per row (as many warps as the row needs), likewise
//   M == 1, N larger                one block per row: max, sum and write passes (the row is
//                                   re-read from L2)
//   M > 1                           one thread per column (loads coalesce across threads), the
//                                   same passes
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/reduce/row_kernel.cuh"
#include "anatomy/backends/cuda/softmax/launch.h"

namespace anatomy::cuda {
namespace {

template <typename A>
__device__ __forceinline__ A cpu_max(A a, A b) {
  return a < b ? b : a;  // std::max: a NaN in b is skipped, a NaN in a kept
}

template <typename A>
struct MaxOp {
  __device__ A identity() const { return -infinity<A>(); }
  __device__ A combine(A a, A b) const { return cpu_max(a, b); }
};
template <typename A>
struct AddOp {
  __device__ A identity() const { return A(0); }
  __device__ A combine(A a, A b) const { return a + b; }
};

template <bool Log, typename A>
__device__ __forceinline__ A softmax_value(A v, A mx, A scale) {
  if constexpr (Log) return (v - mx) - scale;  // scale = log(sum)
  else return exp(v - mx) * scale;             // scale = 1 / sum
}

template <bool Log, typename A>
__device__ __forceinline__ A softmax_scale(A sum) {
  if constexpr (Log) return log(sum);
  else return A(1) / sum;
}

// Rows held in registers by a group (a warp or a block): exp(x - max) is computed once and kept
// in place of x for softmax.
template <typename T, int Vec, bool Log, typename Group>
__device__ __forceinline__ void softmax_rows_in_registers(Group& g, const T* __restrict__ x, T* __restrict__ y,
                                                          int64_t P, int64_t N) {
  using A = opmath_t<T>;
  using Regs = RowRegisters<T, A, Vec>;
  const int n = static_cast<int>(N), rank = g.rank(), size = g.size();
  for (int64_t row = g.first_row(); row < P; row += g.row_step()) {
    Regs r;
    r.load(x + row * N, n, rank, size, -infinity<A>());
    A mx = -infinity<A>();
    r.for_each(n, rank, size, [&](A v) { mx = cpu_max(mx, v); });
    mx = g.all_reduce(MaxOp<A>{}, mx);
    A sum = 0;
    r.for_each(n, rank, size, [&](A& v) {
      const A e = exp(v - mx);
      sum += e;
      if constexpr (!Log) v = e;
    });
    const A scale = softmax_scale<Log>(g.all_reduce(AddOp<A>{}, sum));
    T* yr = y + row * N;
#pragma unroll
    for (int j = 0; j < Regs::kVectors; ++j) {
      const int e = Regs::first(j, rank, size);
      if (e < n) {
        A o[Vec];
#pragma unroll
        for (int k = 0; k < Vec; ++k) {
          const A v = r.v[j * Vec + k];
          if constexpr (Log) o[k] = (v - mx) - scale;
          else o[k] = v * scale;  // exp(x - max) * (1 / sum), as softmax_value
        }
        store_vector<Vec>(yr + e, 0, o);
      }
    }
  }
}

template <typename T, int Vec, bool Log>
__global__ void __launch_bounds__(kRowWarpsPerBlock * 32)
    softmax_warp_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t P, int64_t N) {
  WarpRowGroup g;
  softmax_rows_in_registers<T, Vec, Log>(g, x, y, P, N);
}

template <typename T, int Vec, bool Log>
__global__ void __launch_bounds__(kRowMaxThreads)
    softmax_row_block_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t P, int64_t N) {
  __shared__ double shared[2][64];
  BlockRowGroup g{shared};
  softmax_rows_in_registers<T, Vec, Log>(g, x, y, P, N);
}

// Rows longer than a block holds.
template <typename T, bool Log>
__global__ void __launch_bounds__(kReduceThreads)
    softmax_block_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t P, int64_t N) {
  using A = opmath_t<T>;
  __shared__ A broadcast;
  for (int64_t row = blockIdx.x; row < P; row += gridDim.x) {
    const T* xr = x + row * N;
    T* yr = y + row * N;
    A mx = -infinity<A>();
    for (int64_t i = threadIdx.x; i < N; i += kReduceThreads) mx = cpu_max(mx, to_compute<A>(xr[i]));
    mx = block_reduce(MaxOp<A>{}, mx);
    if (threadIdx.x == 0) broadcast = mx;
    __syncthreads();
    mx = broadcast;
    A sum = 0;
    for (int64_t i = threadIdx.x; i < N; i += kReduceThreads) sum += exp(to_compute<A>(xr[i]) - mx);
    // block_reduce synchronizes first, so every thread has read `broadcast` before it changes.
    sum = block_reduce(AddOp<A>{}, sum);
    if (threadIdx.x == 0) broadcast = softmax_scale<Log>(sum);
    __syncthreads();
    const A scale = broadcast;
    for (int64_t i = threadIdx.x; i < N; i += kReduceThreads) {
      yr[i] = from_compute<T>(softmax_value<Log>(to_compute<A>(xr[i]), mx, scale));
    }
    __syncthreads();  // `broadcast` is written again for the next row
  }
}

template <typename T, bool Log>
__global__ void __launch_bounds__(kReduceThreads)
    softmax_columns_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t P, int64_t N, int64_t M) {
  using A = opmath_t<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kReduceThreads;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x; c < P * M; c += step) {
    const int64_t p = c / M, m = c % M;
    const T* xc = x + p * N * M + m;
    T* yc = y + p * N * M + m;
    A mx = -infinity<A>();
    for (int64_t i = 0; i < N; ++i) mx = cpu_max(mx, to_compute<A>(xc[i * M]));
    A sum = 0;
    for (int64_t i = 0; i < N; ++i) sum += exp(to_compute<A>(xc[i * M]) - mx);
    const A scale = softmax_scale<Log>(sum);
    for (int64_t i = 0; i < N; ++i)
      yc[i * M] = from_compute<T>(softmax_value<Log>(to_compute<A>(xc[i * M]), mx, scale));
  }
}

unsigned blocks(int64_t n) { return static_cast<unsigned>(std::clamp<int64_t>(n, 1, kMaxBlocks)); }

template <typename T, bool Log>
void launch_for(const T* x, T* y, int64_t P, int64_t N, int64_t M, cudaStream_t stream) {
  using A = opmath_t<T>;
  constexpr int kVec = kRowVec<T>;
  const bool vec = row_vectorizable(N, kVec, {x, y});
  if (M == 1 && N <= kWarpRowCapacity<A>) {
    const unsigned grid = row_grid((P + kRowWarpsPerBlock - 1) / kRowWarpsPerBlock);
    if (vec) softmax_warp_kernel<T, kVec, Log><<<grid, kRowWarpsPerBlock * 32, 0, stream>>>(x, y, P, N);
    else softmax_warp_kernel<T, 1, Log><<<grid, kRowWarpsPerBlock * 32, 0, stream>>>(x, y, P, N);
  } else if (M == 1 && N <= kBlockRowCapacity<A>) {
    const int threads = row_block_threads<A>(N, vec ? kVec : 1);
    if (vec) softmax_row_block_kernel<T, kVec, Log><<<row_grid(P), threads, 0, stream>>>(x, y, P, N);
    else softmax_row_block_kernel<T, 1, Log><<<row_grid(P), threads, 0, stream>>>(x, y, P, N);
  } else if (M == 1) {
    softmax_block_kernel<T, Log><<<blocks(P), kReduceThreads, 0, stream>>>(x, y, P, N);
  } else {
    softmax_columns_kernel<T, Log>
        <<<blocks((P * M + kReduceThreads - 1) / kReduceThreads), kReduceThreads, 0, stream>>>(x, y, P, N, M);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launch_softmax(bool log, DType dtype, const void* input, void* out, int64_t P, int64_t N, int64_t M,
                    cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      const T* x = static_cast<const T*>(input);
      T* y = static_cast<T*>(out);
      if (log) launch_for<T, true>(x, y, P, N, M, stream);
      else launch_for<T, false>(x, y, P, N, M, stream);
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_softmax: not a floating dtype");
}

}  // namespace anatomy::cuda
