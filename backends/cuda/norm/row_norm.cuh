// Internal to norm/: included by the room's own files only (its launcher header is launch.h).
// What the CUDA layer_norm and rms_norm kernels share (norm.cu: a warp or block per row;
// norm_tile.cu: tiles of adjacent rows for inputs whose rows are closer in memory than their
// values): the arguments, the statistics' formulas (Note [Two-pass statistics in fp32], norm.cu)
// and the write of normalized values.
//
// Device code only: included by .cu files.
#pragma once

#include "anatomy/backends/cuda/norm/launch.h"
#include "anatomy/backends/cuda/reduce/row_kernel.cuh"

namespace anatomy::cuda {

template <typename T>
struct NormKernelArgs {
  const T* x;
  T* y;
  const T* w;  // null: no weight
  const T* b;  // null: no bias
  T* mean;     // layer_norm only
  T* rstd;
  int64_t rows, n;
  opmath_t<T> eps;
  int64_t x_stride;      // elements from one row of x to the next (y's rows are n apart)
  int64_t x_col_stride;  // elements from one value of a row of x to the next (y's are adjacent)
};

template <typename T>
NormKernelArgs<T> norm_kernel_args(const RowNormBuffers& b, int64_t rows, int64_t cols, double eps) {
  return {static_cast<const T*>(b.input),
          static_cast<T*>(b.out),
          static_cast<const T*>(b.weight),
          static_cast<const T*>(b.bias),
          static_cast<T*>(b.mean),
          static_cast<T*>(b.rstd),
          rows,
          cols,
          static_cast<opmath_t<T>>(eps),
          b.input_row_stride,
          b.input_col_stride};
}

// y = ((x - shift) - correction) * rstd (then * w + b); rms_norm has no shift or correction.
template <typename A>
struct RowScale {
  A shift = 0, correction = 0, rstd = 1;
};

// layer_norm's statistics from the row's sum s and the sums (d, q) of x - m and (x - m)^2,
// m = s / n (Note [Two-pass statistics in fp32]); mean and rstd are written by `writer`.
template <typename T, typename A>
__device__ __forceinline__ RowScale<A> layer_norm_scale(A m, SumPair<A> dq, const NormKernelArgs<T>& a, int64_t row,
                                                        bool writer) {
  const A n = static_cast<A>(a.n);
  RowScale<A> s;
  s.shift = m;
  s.correction = dq.a / n;
  A var = dq.b / n - s.correction * s.correction;
  if (var < A(0)) var = A(0);  // rounding; a NaN stays
  s.rstd = A(1) / sqrt(var + a.eps);
  if (writer) {
    // An infinite m makes the correction NaN; the mean is then m itself, as on the CPU.
    a.mean[row] = static_cast<T>(s.correction == s.correction ? m + s.correction : m);
    a.rstd[row] = static_cast<T>(s.rstd);
  }
  return s;
}

template <typename T, typename A>
__device__ __forceinline__ RowScale<A> rms_norm_scale(A q, const NormKernelArgs<T>& a) {
  RowScale<A> s;
  s.rstd = A(1) / sqrt(q / static_cast<A>(a.n) + a.eps);
  return s;
}

// The output of Vec elements from element e (x holds them). Shifted (Note [Shifted rows],
// row_kernel.cuh): yr + e is aligned but e may lie before the row's start or run past its end
// (those elements are left out), and the weight's and bias's elements may lie anywhere.
template <int Vec, bool Shifted = false, typename T, typename A>
__device__ __forceinline__ void write_normalized(const NormKernelArgs<T>& a, T* yr, int64_t e, const A* x,
                                                 const RowScale<A>& s) {
  A o[Vec], w[Vec], b[Vec];
  const auto load = [&](const T* p, A* out) {
    if constexpr (Shifted) load_shifted<Vec>(p, e, a.n, out);
    else load_vector<Vec>(p + e, 0, out);
  };
#pragma unroll
  for (int k = 0; k < Vec; ++k) o[k] = ((x[k] - s.shift) - s.correction) * s.rstd;
  if (a.w) {
    load(a.w, w);
#pragma unroll
    for (int k = 0; k < Vec; ++k) o[k] *= w[k];
  }
  if (a.b) {
    load(a.b, b);
#pragma unroll
    for (int k = 0; k < Vec; ++k) o[k] += b[k];
  }
  if constexpr (Shifted) store_shifted<Vec>(yr, e, a.n, o);
  else store_vector<Vec>(yr + e, 0, o);
}

}  // namespace anatomy::cuda
