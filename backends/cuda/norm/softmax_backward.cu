// Fused CUDA backward kernels of softmax and log_softmax along one dim of a contiguous [P, N, M]
// block, with the arithmetic of the composite (dispatch/ops/nn_backward.cpp):
//   softmax      dx = y * (g - sum(g * y))
//   log_softmax  dx = g - exp(y) * sum(g)
// fp16/bf16 compute in fp32. The shapes are those of the forward (softmax.cu):
//   M == 1, N <= 32 * kRowSlots     one warp per row, g and y held in registers (Note [Rows in
//                                   registers], row_kernel.cuh): each read once, dx written once
//   M == 1, up to 512 threads' rows one block per row, likewise (two rows of registers a thread:
//                                   blocks of 1024 threads would spill them)
//   M == 1, N larger                one block per row: a sum pass and a write pass (the row is
//                                   re-read from L2)
//   M > 1                           one thread per column (loads coalesce across threads)
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/norm/launch.h"
#include "anatomy/backends/cuda/reduce/row_kernel.cuh"

namespace anatomy::cuda {
namespace {

inline constexpr int kBackwardBlockThreads = 512;  // the most threads of a row-in-registers block

// The summed term and the result of one element.
template <bool Log, typename A>
__device__ __forceinline__ A softmax_grad_term(A g, A y) {
  if constexpr (Log) return g;
  else return g * y;
}
template <bool Log, typename A>
__device__ __forceinline__ A softmax_grad_value(A g, A y, A sum) {
  if constexpr (Log) return g - exp(y) * sum;
  else return y * (g - sum);
}

template <typename T, int Vec, bool Log, typename Group>
__device__ __forceinline__ void softmax_backward_rows_in_registers(Group& grp, const T* __restrict__ g,
                                                                   const T* __restrict__ y, T* __restrict__ dx,
                                                                   int64_t P, int64_t N) {
  using A = opmath_t<T>;
  using Regs = RowRegisters<T, A, Vec>;
  const int n = static_cast<int>(N), rank = grp.rank(), size = grp.size();
  for (int64_t row = grp.first_row(); row < P; row += grp.row_step()) {
    Regs rg, ry;
    rg.load(g + row * N, n, rank, size, A(0));
    ry.load(y + row * N, n, rank, size, A(0));
    A sum = 0;
#pragma unroll
    for (int j = 0; j < Regs::kVectors; ++j) {
      if (Regs::first(j, rank, size) < n) {
#pragma unroll
        for (int k = 0; k < Vec; ++k) sum += softmax_grad_term<Log>(rg.v[j * Vec + k], ry.v[j * Vec + k]);
      }
    }
    sum = grp.all_reduce(AddValueOp<A>{}, sum);
    T* out = dx + row * N;
#pragma unroll
    for (int j = 0; j < Regs::kVectors; ++j) {
      const int e = Regs::first(j, rank, size);
      if (e < n) {
        A o[Vec];
#pragma unroll
        for (int k = 0; k < Vec; ++k) o[k] = softmax_grad_value<Log>(rg.v[j * Vec + k], ry.v[j * Vec + k], sum);
        store_vector<Vec>(out + e, 0, o);
      }
    }
  }
}

template <typename T, int Vec, bool Log>
__global__ void __launch_bounds__(kRowWarpsPerBlock * 32)
    softmax_backward_warp_kernel(const T* __restrict__ g, const T* __restrict__ y, T* __restrict__ dx, int64_t P,
                                 int64_t N) {
  WarpRowGroup grp;
  softmax_backward_rows_in_registers<T, Vec, Log>(grp, g, y, dx, P, N);
}

template <typename T, int Vec, bool Log>
__global__ void __launch_bounds__(kBackwardBlockThreads)
    softmax_backward_row_block_kernel(const T* __restrict__ g, const T* __restrict__ y, T* __restrict__ dx, int64_t P,
                                      int64_t N) {
  __shared__ double shared[2][64];
  BlockRowGroup grp{shared};
  softmax_backward_rows_in_registers<T, Vec, Log>(grp, g, y, dx, P, N);
}

// Rows longer than a block holds in registers.
template <typename T, bool Log>
__global__ void __launch_bounds__(kBackwardBlockThreads)
    softmax_backward_loop_kernel(const T* __restrict__ g, const T* __restrict__ y, T* __restrict__ dx, int64_t P,
                                 int64_t N) {
  using A = opmath_t<T>;
  __shared__ double shared[2][64];
  BlockRowGroup grp{shared};
  for (int64_t row = grp.first_row(); row < P; row += grp.row_step()) {
    const T* gr = g + row * N;
    const T* yr = y + row * N;
    T* out = dx + row * N;
    A sum = 0;
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
      sum += softmax_grad_term<Log>(static_cast<A>(gr[i]), static_cast<A>(yr[i]));
    }
    sum = grp.all_reduce(AddValueOp<A>{}, sum);
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
      out[i] = static_cast<T>(softmax_grad_value<Log>(static_cast<A>(gr[i]), static_cast<A>(yr[i]), sum));
    }
  }
}

template <typename T, bool Log>
__global__ void __launch_bounds__(kReduceThreads)
    softmax_backward_columns_kernel(const T* __restrict__ g, const T* __restrict__ y, T* __restrict__ dx, int64_t P,
                                    int64_t N, int64_t M) {
  using A = opmath_t<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kReduceThreads;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x; c < P * M; c += step) {
    const int64_t base = (c / M) * N * M + c % M;
    A sum = 0;
    for (int64_t i = 0; i < N; ++i) {
      sum += softmax_grad_term<Log>(static_cast<A>(g[base + i * M]), static_cast<A>(y[base + i * M]));
    }
    for (int64_t i = 0; i < N; ++i) {
      const int64_t e = base + i * M;
      dx[e] = static_cast<T>(softmax_grad_value<Log>(static_cast<A>(g[e]), static_cast<A>(y[e]), sum));
    }
  }
}

template <typename T, bool Log>
void launch_for(const T* g, const T* y, T* dx, int64_t P, int64_t N, int64_t M, cudaStream_t stream) {
  using A = opmath_t<T>;
  constexpr int kVec = kRowVec<T>;
  const bool vec = row_vectorizable(N, kVec, {g, y, dx});
  const int block_threads = row_block_threads<A>(N, vec ? kVec : 1);
  if (M == 1 && N <= kWarpRowCapacity<A>) {
    const unsigned grid = row_grid((P + kRowWarpsPerBlock - 1) / kRowWarpsPerBlock);
    if (vec) softmax_backward_warp_kernel<T, kVec, Log><<<grid, kRowWarpsPerBlock * 32, 0, stream>>>(g, y, dx, P, N);
    else softmax_backward_warp_kernel<T, 1, Log><<<grid, kRowWarpsPerBlock * 32, 0, stream>>>(g, y, dx, P, N);
  } else if (M == 1 && N <= kBlockRowCapacity<A> && block_threads <= kBackwardBlockThreads) {
    if (vec) softmax_backward_row_block_kernel<T, kVec, Log><<<row_grid(P), block_threads, 0, stream>>>(g, y, dx, P, N);
    else softmax_backward_row_block_kernel<T, 1, Log><<<row_grid(P), block_threads, 0, stream>>>(g, y, dx, P, N);
  } else if (M == 1) {
    softmax_backward_loop_kernel<T, Log><<<row_grid(P), kBackwardBlockThreads, 0, stream>>>(g, y, dx, P, N);
  } else {
    const unsigned grid = row_grid((P * M + kReduceThreads - 1) / kReduceThreads);
    softmax_backward_columns_kernel<T, Log><<<grid, kReduceThreads, 0, stream>>>(g, y, dx, P, N, M);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launch_softmax_backward(bool log, DType dtype, const void* grad, const void* output, void* grad_input, int64_t P,
                             int64_t N, int64_t M, cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      const T* g = static_cast<const T*>(grad);
      const T* y = static_cast<const T*>(output);
      T* dx = static_cast<T*>(grad_input);
      if (log) launch_for<T, true>(g, y, dx, P, N, M, stream);
      else launch_for<T, false>(g, y, dx, P, N, M, stream);
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_softmax_backward: not a floating dtype");
}

}  // namespace anatomy::cuda
