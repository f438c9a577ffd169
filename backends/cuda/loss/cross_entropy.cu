// CUDA kernels of cross_entropy's fused operators: one block per row of logits (grid-stride over
// rows), 16-byte vector loads and stores where the row's address allows (a scalar head up to the
// first aligned element, then vectors, then a scalar tail), fp16/bf16 in fp32. Each thread loads
// kUnroll vectors before it computes on them, so that several loads are in flight per thread
// while it works: a row of a GPT vocabulary is read at the memory's pace, not at one load's
// latency per vector.
//   forward: one read of the row. Each thread keeps a running max and the sum of exp(x - max)
//            (rescaled when the max grows: the online log-sum-exp), and, with label smoothing,
//            sum w_c x_c and sum w_c; the block combines them, and thread 0 reads the target's
//            logit and writes the row's loss and lse. A vector of finite values raises the max
//            once, by its own maximum; a vector holding an infinity or a NaN goes value by value.
//   backward: one read and one write of the row: dx_c = g [(1 - s) w_t (p_c - [c = t]) +
//            (s / C) (W p_c - w_c)], p_c = exp(x_c - lse).
// The CPU computes the same values with public operators (dispatch/ops/cross_entropy_rows.cpp);
// sums are in another order, so results agree to rounding.
//
// Note [exp in the fp16 and bf16 rows]
// For 2-byte logits the exponentials are exp2f(x log2(e) - m log2(e)), one FMA and the SFU's
// exp2 (about 2 ulp), not expf's range reduction: the FMA's rounding scales with the argument,
// so p = e^(x - m) is off by up to about |x - m| 2^-24 relative (1.2e-6 at x - m = -20, where p
// is 2e-9), far below the 2^-9 (bf16) or 2^-12 (fp16) the gradient is rounded to, and within
// 1e-6 in the fp32 lse. fp32 and fp64 rows keep exp's full accuracy.
#include <cstdint>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/loss/launch.h"
#include "anatomy/backends/cuda/reduce/row_kernel.cuh"

namespace anatomy::cuda {
namespace {

// The online log-sum-exp of a thread's share of a row, and the smoothing sums.
template <typename A>
struct RowState {
  A max, sum, weighted_x, weight;
};

template <typename A>
struct RowStateOp {
  __device__ RowState<A> identity() const { return {-infinity<A>(), A(0), A(0), A(0)}; }
  __device__ RowState<A> combine(RowState<A> a, RowState<A> b) const {
    RowState<A> r{a.max, a.sum, a.weighted_x + b.weighted_x, a.weight + b.weight};
    if (b.max == -infinity<A>()) return r;  // b holds no finite element: nothing to rescale
    if (a.max == -infinity<A>()) {
      r.max = b.max;
      r.sum = b.sum;
      return r;
    }
    r.max = a.max < b.max ? b.max : a.max;
    r.sum = a.sum * exp(a.max - r.max) + b.sum * exp(b.max - r.max);
    return r;
  }
};

template <typename A>
__device__ __forceinline__ void add_to_state(RowState<A>& st, A v) {
  if (v == -infinity<A>()) return;  // exp(-inf) adds nothing (and -inf - -inf would be NaN)
  if (v != v) {                     // NaN: kept as the max too, so that combining with other threads' states keeps it
    st.max = v;
    st.sum = v;
    return;
  }
  if (v > st.max) {
    st.sum = st.sum * exp(st.max - v) + A(1);  // exp(-inf) is 0 for the first element
    st.max = v;
  } else {
    st.sum += exp(v - st.max);  // a NaN v (or max) makes the sum NaN, as the CPU's
  }
}

// A vector of finite values: the max raised once, by the vector's own maximum, then its terms.
// A vector holding an infinity or a NaN goes value by value (add_to_state's special cases).
template <typename A, int N, typename Exp>
__device__ __forceinline__ void add_vector_to_state(RowState<A>& st, const A (&v)[N], const Exp& e) {
  bool special = false;
  A m = v[0];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    special |= !(abs(v[k]) < infinity<A>());
    m = max(m, v[k]);
  }
  if (special) {
#pragma unroll
    for (int k = 0; k < N; ++k) add_to_state(st, v[k]);
    return;
  }
  if (m > st.max) {          // never true once the max is NaN or +inf: the sum stays NaN, or gains e^-inf = 0
    st.sum *= e(st.max, m);  // 0 while the max was -inf (no finite value yet)
    st.max = m;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) st.sum += e(v[k], st.max);
}

// e^(x - m): expf's accuracy for fp32 and fp64, exp2f of one FMA for fp16 and bf16 (Note [exp in
// the fp16 and bf16 rows]).
template <typename T>
struct RowExp {
  using A = opmath_t<T>;
  __device__ __forceinline__ A operator()(A x, A m) const {
    if constexpr (sizeof(T) == 2) {
      constexpr float kLog2e = 1.4426950408889634f;
      return exp2f(fmaf(x, kLog2e, -m * kLog2e));
    } else {
      return exp(x - m);
    }
  }
};

inline constexpr int kUnroll = 4;  // vectors a thread loads before it computes on them

// g(word, j) for each of a row's 16-byte words j in [0, words) that a block thread owns
// (threadIdx.x, then a block's width apart), kUnroll of them loaded before g runs on them.
template <typename Word, typename G>
__device__ __forceinline__ void for_each_word(const Word* __restrict__ v, int64_t words, G&& g) {
  const int64_t step = blockDim.x;
  int64_t j = threadIdx.x;
  for (; j + (kUnroll - 1) * step < words; j += kUnroll * step) {
    Word w[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) w[u] = v[j + u * step];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) g(w[u], j + u * step);
  }
  for (; j < words; j += step) g(v[j], j);
}

// The elements of a row a block thread visits: scalar(value, column) for a scalar head up to the
// first 16-byte boundary and a scalar tail, vector(values, first column) for the 16-byte
// vectors between.
template <typename T>
__device__ __forceinline__ int64_t aligned_head(const T* row, int64_t n) {
  constexpr int kVec = kRowVec<T>;
  const int64_t misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(row) % 16) / sizeof(T);
  return misaligned == 0 ? 0 : min(static_cast<int64_t>(kVec) - misaligned, n);
}

template <typename T, typename A, typename Scalar, typename Vector>
__device__ __forceinline__ void visit_row(const T* __restrict__ row, int64_t n, Scalar&& scalar, Vector&& vector) {
  constexpr int kVec = kRowVec<T>;
  using Word = AlignedVector<T, kVec>;
  const int64_t head = aligned_head(row, n), vectors = (n - head) / kVec, step = blockDim.x;
  for (int64_t c = threadIdx.x; c < head; c += step) scalar(static_cast<A>(row[c]), c);
  const auto* v = reinterpret_cast<const Word*>(row + head);
  const auto widen = [&](const Word& w, int64_t j) {
    A a[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) a[k] = static_cast<A>(w.v[k]);
    vector(a, head + j * kVec);
  };
  for_each_word(v, vectors, widen);
  for (int64_t c = head + vectors * kVec + threadIdx.x; c < n; c += step) scalar(static_cast<A>(row[c]), c);
}

// out[c] = f(in[c], c) over a row; vectors (kUnroll loaded at a time) when both rows are
// misaligned alike.
template <typename T, typename A, typename F>
__device__ __forceinline__ void map_row(const T* __restrict__ in, T* __restrict__ out, int64_t n, F&& f) {
  constexpr int kVec = kRowVec<T>;
  using Word = AlignedVector<T, kVec>;
  const bool together = reinterpret_cast<uintptr_t>(in) % 16 == reinterpret_cast<uintptr_t>(out) % 16;
  const int64_t head = together ? aligned_head(in, n) : n, vectors = (n - head) / kVec, step = blockDim.x;
  for (int64_t c = threadIdx.x; c < head; c += step) out[c] = static_cast<T>(f(static_cast<A>(in[c]), c));
  const auto* vi = reinterpret_cast<const Word*>(in + head);
  auto* vo = reinterpret_cast<Word*>(out + head);
  const auto mapped = [&](const Word& w, int64_t j) {
    Word o;
#pragma unroll
    for (int k = 0; k < kVec; ++k) o.v[k] = static_cast<T>(f(static_cast<A>(w.v[k]), head + j * kVec + k));
    vo[j] = o;
  };
  for_each_word(vi, vectors, mapped);
  for (int64_t c = head + vectors * kVec + threadIdx.x; c < n; c += step) {
    out[c] = static_cast<T>(f(static_cast<A>(in[c]), c));
  }
}

template <typename T, bool Smooth>
__global__ void __launch_bounds__(kReduceThreads)
    cross_entropy_forward_kernel(const T* __restrict__ x, const int64_t* __restrict__ target,
                                 const opmath_t<T>* __restrict__ weight, int64_t rows, int64_t classes,
                                 int64_t ignore_index, opmath_t<T> smoothing, opmath_t<T>* __restrict__ loss,
                                 opmath_t<T>* __restrict__ lse_out, IndexErrorSink sink) {
  using A = opmath_t<T>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * classes;
    RowState<A> st = RowStateOp<A>{}.identity();
    const auto smoothing_sums = [&](A v, int64_t c) {
      if constexpr (Smooth) {
        const A w = weight != nullptr ? weight[c] : A(1);
        st.weighted_x += w * v;
        st.weight += w;
      }
    };
    visit_row<T, A>(
        xr, classes,
        [&](A v, int64_t c) {
          add_to_state(st, v);
          smoothing_sums(v, c);
        },
        [&](const A(&v)[kRowVec<T>], int64_t c0) {
          add_vector_to_state(st, v, RowExp<T>{});
#pragma unroll
          for (int k = 0; k < kRowVec<T>; ++k) smoothing_sums(v[k], c0 + k);
        });
    st = block_reduce(RowStateOp<A>{}, st);
    if (threadIdx.x == 0) {
      const A lse = st.max == -infinity<A>() ? st.max : st.max + log(st.sum);
      const int64_t t = target[row];
      A l = A(0);
      if (t != ignore_index) {
        if (t < 0 || t >= classes) {
          sink.report(IndexErrorKind::OutOfBounds, t, classes, 1);
        } else {
          const A wt = weight != nullptr ? weight[t] : A(1);
          l = wt * (lse - static_cast<A>(xr[t]));
          if constexpr (Smooth) {
            l = (A(1) - smoothing) * l + smoothing / static_cast<A>(classes) * (st.weight * lse - st.weighted_x);
          }
        }
      }
      loss[row] = l;
      lse_out[row] = lse;
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kReduceThreads)
    cross_entropy_backward_kernel(const T* __restrict__ x, const int64_t* __restrict__ target,
                                  const opmath_t<T>* __restrict__ weight, const opmath_t<T>* __restrict__ weight_sum,
                                  const opmath_t<T>* __restrict__ grad_loss, const opmath_t<T>* __restrict__ lse,
                                  int64_t rows, int64_t classes, int64_t ignore_index, opmath_t<T> smoothing,
                                  T* __restrict__ dx) {
  using A = opmath_t<T>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * classes;
    T* dr = dx + row * classes;
    const int64_t t = target[row];
    if (t == ignore_index || t < 0 || t >= classes) {
      map_row<T, A>(xr, dr, classes, [](A, int64_t) { return A(0); });
      continue;
    }
    const A g = grad_loss[row], m = lse[row];
    const A wt = weight != nullptr ? weight[t] : A(1);
    const A total = weight != nullptr ? *weight_sum : static_cast<A>(classes);
    const A share = smoothing / static_cast<A>(classes);
    // dx_c = g [((1 - s) w_t + (s / C) W) p_c - (s / C) w_c] - g (1 - s) w_t [c = t]
    const A p_factor = g * ((A(1) - smoothing) * wt + share * total);
    const A at_target = g * (A(1) - smoothing) * wt;
    const A gs = g * share;
    map_row<T, A>(xr, dr, classes, [&](A v, int64_t c) {
      A d = p_factor * RowExp<T>{}(v, m);
      if (gs != A(0)) d -= gs * (weight != nullptr ? weight[c] : A(1));
      if (c == t) d -= at_target;
      return d;
    });
  }
}

unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(std::clamp<int64_t>(rows, 1, kMaxBlocks)); }

}  // namespace

void launch_cross_entropy_rows(const CrossEntropyRowsArgs& a, void* loss, void* lse, const IndexErrorSink& sink,
                               cudaStream_t stream) {
  if (a.rows == 0) return;
  const bool launched = dtype_switch(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      using A = opmath_t<T>;
      const auto* x = static_cast<const T*>(a.logits);
      const auto* w = static_cast<const A*>(a.weight);
      const A s = static_cast<A>(a.label_smoothing);
      if (a.label_smoothing > 0) {
        cross_entropy_forward_kernel<T, true><<<row_blocks(a.rows), kReduceThreads, 0, stream>>>(
            x, a.target, w, a.rows, a.classes, a.ignore_index, s, static_cast<A*>(loss), static_cast<A*>(lse), sink);
      } else {
        cross_entropy_forward_kernel<T, false><<<row_blocks(a.rows), kReduceThreads, 0, stream>>>(
            x, a.target, w, a.rows, a.classes, a.ignore_index, s, static_cast<A*>(loss), static_cast<A*>(lse), sink);
      }
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_cross_entropy_rows: not a floating dtype");
  ANATOMY_CUDA_LAUNCH_CHECK();
}

void launch_cross_entropy_rows_backward(const CrossEntropyRowsArgs& a, const void* grad_loss, const void* lse,
                                        const void* weight_sum, void* grad_logits, cudaStream_t stream) {
  if (a.rows == 0 || a.classes == 0) return;
  const bool launched = dtype_switch(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      using A = opmath_t<T>;
      cross_entropy_backward_kernel<T><<<row_blocks(a.rows), kReduceThreads, 0, stream>>>(
          static_cast<const T*>(a.logits), a.target, static_cast<const A*>(a.weight), static_cast<const A*>(weight_sum),
          static_cast<const A*>(grad_loss), static_cast<const A*>(lse), a.rows, a.classes, a.ignore_index,
          static_cast<A>(a.label_smoothing), static_cast<T*>(grad_logits));
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_cross_entropy_rows_backward: not a floating dtype");
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace anatomy::cuda
