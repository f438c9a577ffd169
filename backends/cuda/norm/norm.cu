// CUDA kernels of layer_norm (native_layer_norm's output, mean and rstd) and rms_norm over each
// row of `cols` trailing elements, with the CPU's formulas (backends/cpu/norm_cpu.cpp): fp16,
// bf16 and fp32 compute in fp32, fp64 in fp64. Three shapes (Note [Rows in registers],
// row_kernel.cuh):
//   cols <= 32 * kRowSlots      one warp per row, the row held in registers: one read, one write
//   cols <= 1024 * kRowSlots    one block per row (as many warps as the row needs), likewise
//   longer                      one block per row, looping: the row is read three times
// A row that starts off a 16-byte boundary or whose length is not a whole number of vectors moves
// in vectors all the same, shifted to its output's alignment (Note [Shifted rows]).
//
// Note [Two-pass statistics in fp32]
//   The CPU accumulates in fp64; the kernels accumulate in fp32 and keep the accuracy of a
//   two-pass variance: m = sum(x) / n, then d = sum(x - m) and q = sum((x - m)^2) in one more
//   reduction, var = q / n - (d / n)^2. The correction c = d / n repairs the rounding of m, and
//   outputs are ((x - m) - c) * rstd: x - m is exact when x is near m (Sterbenz), so a large
//   common offset (values around 1000 that differ by 1) costs no more than an fp32 rounding of
//   the deviation, where (x - (m + c)) would cost one of the offset.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/norm/launch.h"
#include "anatomy/backends/cuda/norm/row_norm.cuh"

namespace anatomy::cuda {
namespace {

inline constexpr int kLoopThreads = 512;

// Rows held in registers by a group (a warp or a block); Shifted: rows and outputs anywhere, the
// vectors following the output's alignment (Note [Shifted rows], row_kernel.cuh).
template <typename T, int Vec, bool Rms, bool Shifted, typename Group>
__device__ __forceinline__ void norm_rows_in_registers(Group& g, const NormKernelArgs<T>& a) {
  using A = opmath_t<T>;
  using Regs = RowRegisters<T, A, Vec>;
  const int n = static_cast<int>(a.n), rank = g.rank(), size = g.size();
  for (int64_t row = g.first_row(); row < a.rows; row += g.row_step()) {
    T* yr = a.y + row * a.n;
    const int head = Shifted ? misaligned_elements(yr) : 0;
    Regs r;
    if constexpr (Shifted) r.load_shifted_row(a.x + row * a.x_stride, n, head, rank, size);
    else r.load(a.x + row * a.x_stride, n, rank, size, A(0), a.x_col_stride);
    const auto each = [&](auto&& f) {
      if constexpr (Shifted) r.for_each_shifted(n, head, rank, size, f);
      else r.for_each(n, rank, size, f);
    };
    RowScale<A> s;
    if constexpr (Rms) {
      A q = 0;
      each([&](A v) { q += v * v; });
      s = rms_norm_scale(g.all_reduce(AddValueOp<A>{}, q), a);
    } else {
      A sum = 0;
      each([&](A v) { sum += v; });
      const A m = g.all_reduce(AddValueOp<A>{}, sum) / static_cast<A>(n);
      SumPair<A> dq{A(0), A(0)};
      each([&](A v) {
        const A d = v - m;
        dq.a += d;
        dq.b += d * d;
      });
      s = layer_norm_scale(m, g.all_reduce(AddPairOp<A>{}, dq), a, row, rank == 0);
    }
#pragma unroll
    for (int j = 0; j < Regs::kVectors; ++j) {
      const int e = Regs::first(j, rank, size) - head;
      if (e < n) write_normalized<Vec, Shifted>(a, yr, e, r.v + j * Vec, s);
    }
  }
}

template <typename T, int Vec, bool Rms, bool Shifted>
__global__ void __launch_bounds__(kRowWarpsPerBlock * 32) norm_warp_kernel(NormKernelArgs<T> a) {
  WarpRowGroup g;
  norm_rows_in_registers<T, Vec, Rms, Shifted>(g, a);
}

template <typename T, int Vec, bool Rms>
__global__ void __launch_bounds__(kRowMaxThreads) norm_block_kernel(NormKernelArgs<T> a) {
  __shared__ double shared[2][64];
  BlockRowGroup g{shared};
  norm_rows_in_registers<T, Vec, Rms, false>(g, a);
}

// Shifted rows in blocks of up to 1024 threads, at most 56 registers a thread: a shifted row of
// 8191 floats needs 17 warps, and two such blocks share an SM at 56 registers, not at 64.
template <typename T, int Vec, bool Rms>
__global__ void __maxnreg__(56) norm_block_shifted_kernel(NormKernelArgs<T> a) {
  __shared__ double shared[2][64];
  BlockRowGroup g{shared};
  norm_rows_in_registers<T, Vec, Rms, true>(g, a);
}

// The same for blocks of at most 512 threads (fp32 computation, rows of up to 8192 values in
// vectors) with at most 40 registers a thread, so that three blocks fit an SM: one block's loads
// overlap two others' reductions and writes.
template <typename T, int Vec, bool Rms>
__global__ void __launch_bounds__(512, 3) norm_block512_kernel(NormKernelArgs<T> a) {
  __shared__ double shared[2][64];
  BlockRowGroup g{shared};
  norm_rows_in_registers<T, Vec, Rms, false>(g, a);
}

// Rows longer than a block holds: the statistics' passes and the write each read the row.
template <typename T, bool Rms>
__global__ void __launch_bounds__(kLoopThreads) norm_loop_kernel(NormKernelArgs<T> a) {
  using A = opmath_t<T>;
  __shared__ double shared[2][64];
  BlockRowGroup g{shared};
  for (int64_t row = g.first_row(); row < a.rows; row += g.row_step()) {
    const T* xr = a.x + row * a.x_stride;
    RowScale<A> s;
    if constexpr (Rms) {
      A q = 0;
      for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
        const A v = to_compute<A>(xr[i * a.x_col_stride]);
        q += v * v;
      }
      s = rms_norm_scale(g.all_reduce(AddValueOp<A>{}, q), a);
    } else {
      A sum = 0;
      for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) sum += to_compute<A>(xr[i * a.x_col_stride]);
      const A m = g.all_reduce(AddValueOp<A>{}, sum) / static_cast<A>(a.n);
      SumPair<A> dq{A(0), A(0)};
      for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
        const A d = to_compute<A>(xr[i * a.x_col_stride]) - m;
        dq.a += d;
        dq.b += d * d;
      }
      s = layer_norm_scale(m, g.all_reduce(AddPairOp<A>{}, dq), a, row, threadIdx.x == 0);
    }
    T* yr = a.y + row * a.n;
    for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
      const A v = to_compute<A>(xr[i * a.x_col_stride]);
      write_normalized<1>(a, yr, i, &v, s);
    }
  }
}

template <typename T, bool Rms>
void launch_for(const NormKernelArgs<T>& a, cudaStream_t stream) {
  using A = opmath_t<T>;
  constexpr int kVec = kRowVec<T>;
  const bool vec = row_vectorizable(a.n, kVec, {a.x, a.y, a.w, a.b}) && a.x_stride % kVec == 0 && a.x_col_stride == 1;
  // Rows of adjacent values that are not aligned (or not a whole number of vectors) still move in
  // vectors, shifted (Note [Shifted rows]); a shifted row may need one vector more.
  const bool shifted = !vec && a.x_col_stride == 1;
  const int64_t span = shifted ? a.n + kVec - 1 : a.n;
  if (span <= kWarpRowCapacity<A>) {
    const unsigned grid = row_grid((a.rows + kRowWarpsPerBlock - 1) / kRowWarpsPerBlock);
    if (vec) norm_warp_kernel<T, kVec, Rms, false><<<grid, kRowWarpsPerBlock * 32, 0, stream>>>(a);
    else if (shifted) norm_warp_kernel<T, kVec, Rms, true><<<grid, kRowWarpsPerBlock * 32, 0, stream>>>(a);
    else norm_warp_kernel<T, 1, Rms, false><<<grid, kRowWarpsPerBlock * 32, 0, stream>>>(a);
  } else if (span <= kBlockRowCapacity<A>) {
    const int threads = row_block_threads<A>(span, vec || shifted ? kVec : 1);
    const unsigned grid = row_grid(a.rows);
    if (shifted) {
      norm_block_shifted_kernel<T, kVec, Rms><<<grid, threads, 0, stream>>>(a);
    } else if (!vec) {
      norm_block_kernel<T, 1, Rms><<<grid, threads, 0, stream>>>(a);
    } else if constexpr (std::is_same_v<A, float>) {
      if (threads <= 512) norm_block512_kernel<T, kVec, Rms><<<grid, threads, 0, stream>>>(a);
      else norm_block_kernel<T, kVec, Rms><<<grid, threads, 0, stream>>>(a);
    } else {
      norm_block_kernel<T, kVec, Rms><<<grid, threads, 0, stream>>>(a);
    }
  } else {
    norm_loop_kernel<T, Rms><<<row_grid(a.rows), kLoopThreads, 0, stream>>>(a);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launch_row_norm(RowNormKind kind, DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols, double eps,
                     cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      const NormKernelArgs<T> a = norm_kernel_args<T>(b, rows, cols, eps);
      if (kind == RowNormKind::Rms) launch_for<T, true>(a, stream);
      else launch_for<T, false>(a, stream);
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_row_norm: not a floating dtype");
}

}  // namespace anatomy::cuda
