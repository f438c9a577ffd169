// CPU: softmax and log_softmax along one dim, over a contiguous [P, N, M] input. Numerically
// stable: the max along the dim is subtracted before exp; fp16/bf16 compute in fp32. e^x is the
// vectorized loop of backends/cpu/vec_loops.h (fp32 and fp64), once per element along an
// innermost dim, twice for softmax along another (once for the sums, once for the outputs). When
// the dim is innermost (M == 1) each row runs in blocks that stay in L1; otherwise the max and
// sum are accumulated across M contiguous columns at once.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "anatomy/backends/cpu/vec_loops.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/parallel.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/norm_plan.h"

namespace anatomy::cpu {
namespace {

template <typename T>
using softmax_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// e^v over n contiguous values, in place.
template <typename A>
void exp_in_place(A* v, int64_t n) {
  if constexpr (std::is_same_v<A, float>) {
    static const VecLoop loop = vec_loop(VecFn::Exp);
    loop(v, v, n, {});
  } else {
    static const VecLoop64 loop = vec_loop64(VecFn::Exp);
    loop(v, v, n, {});
  }
}

// Eight independent partial results, so that the loops are not one long chain of dependent adds
// or compares (and GCC can keep them in vector lanes).
constexpr int64_t kLanes = 8;

template <typename A, typename T>
[[gnu::always_inline]] inline A row_max(const T* x, int64_t n) {
  int64_t i = 0;
  A best = -std::numeric_limits<A>::infinity();
  if constexpr (std::is_same_v<T, A>) {
    // GCC vectorizes no max reduction of floats without -ffinite-math-only: a vector of partial
    // maxima written with GCC's vector extensions instead (a compare and a blend per vector; a
    // NaN never replaces a maximum, as std::max(m, NaN) keeps m).
    using Vec [[gnu::vector_size(32)]] = A;
    constexpr int64_t kWidth = 32 / static_cast<int64_t>(sizeof(A));
    Vec m = Vec{} + best;
    for (; i + kWidth <= n; i += kWidth) {
      Vec v;
      std::memcpy(&v, x + i, sizeof(Vec));
      m = v > m ? v : m;
    }
    for (int64_t k = 0; k < kWidth; ++k) best = std::max(best, A(m[k]));
  } else {
    // fp16 and bf16: converted a block at a time, then the same.
    constexpr int64_t kConverted = 256;
    A block[kConverted];
    for (; i + kConverted <= n; i += kConverted) {
      for (int64_t k = 0; k < kConverted; ++k) block[k] = convert<A>(x[i + k]);
      best = std::max(best, row_max<A>(block, kConverted));
    }
  }
  for (; i < n; ++i) best = std::max(best, convert<A>(x[i]));
  return best;
}

template <typename A>
[[gnu::always_inline]] inline A block_sum(const A* v, int64_t n) {
  A s[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) s[k] += v[i + k];
  }
  for (; i < n; ++i) s[0] += v[i];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// Values per block of a row: 4 KiB of fp32, in L1 between the passes over it.
constexpr int64_t kBlock = 1024;

// One row of N contiguous values (M == 1). softmax stores the exponentials (in y itself for fp32
// and fp64, in `row`, N values of the accumulation type, for fp16 and bf16, which must round
// once), sums them block by block while the block is in L1, and scales them; log_softmax only
// sums them, in a block on the stack.
template <typename T, bool Log>
[[gnu::always_inline]] inline void softmax_row(const T* xr, T* yr, int64_t N, softmax_acc_t<T>* row) {
  using A = softmax_acc_t<T>;
  const A mx = row_max<A>(xr, N);
  A block[kBlock];
  A* exps = row;
  if constexpr (std::is_same_v<T, A>) exps = yr;
  A sum = 0;
  for (int64_t b = 0; b < N; b += kBlock) {
    const int64_t m = std::min(kBlock, N - b);
    A* e = Log ? block : exps + b;
    for (int64_t i = 0; i < m; ++i) e[i] = convert<A>(xr[b + i]) - mx;
    exp_in_place(e, m);
    sum += block_sum(e, m);
  }
  if constexpr (Log) {
    // (x - max) - log(sum): subtracting max + log(sum) at once would round that sum first.
    const A log_sum = std::log(sum);
    for (int64_t i = 0; i < N; ++i) yr[i] = convert<T>((convert<A>(xr[i]) - mx) - log_sum);
  } else {
    const A inv = A(1) / sum;
    for (int64_t i = 0; i < N; ++i) yr[i] = convert<T>(exps[i] * inv);
  }
}

// softmax_row compiled for the baseline, AVX2 with FMA and AVX-512, the widest the CPU has taken:
// the passes around exp (the max, the subtraction, the sums, the scaling, fp16/bf16 conversions)
// take as long as exp itself at the baseline's 4 lanes (docs/perf.md, "softmax and log_softmax on
// the CPU over the vectorized exp", has softmax of 4096^2 fp32 with each copy).
template <typename T, bool Log>
using RowLoop = void (*)(const T*, T*, int64_t, softmax_acc_t<T>*);

template <typename T, bool Log>
void row_baseline(const T* xr, T* yr, int64_t N, softmax_acc_t<T>* row) {
  softmax_row<T, Log>(xr, yr, N, row);
}
#if defined(__x86_64__)
template <typename T, bool Log>
[[gnu::target("avx2,fma")]] void row_avx2(const T* xr, T* yr, int64_t N, softmax_acc_t<T>* row) {
  softmax_row<T, Log>(xr, yr, N, row);
}
template <typename T, bool Log>
[[gnu::target("avx512f,prefer-vector-width=512")]] void row_avx512(const T* xr, T* yr, int64_t N,
                                                                   softmax_acc_t<T>* row) {
  softmax_row<T, Log>(xr, yr, N, row);
}
#endif

template <typename T, bool Log>
RowLoop<T, Log> row_loop() {
#if defined(__x86_64__)
  if (cpu_has_avx512f()) return &row_avx512<T, Log>;
  if (cpu_has_avx2_fma()) return &row_avx2<T, Log>;
#endif
  return &row_baseline<T, Log>;
}

template <typename T, bool Log>
void softmax_loop(const SoftmaxPlan& plan) {
  using A = softmax_acc_t<T>;
  const int64_t P = plan.outer, N = plan.size, M = plan.inner;
  if (P * N * M == 0) return;
  const T* x = static_cast<const T*>(plan.input.data_ptr());
  T* y = static_cast<T*>(plan.out.data_ptr());
  if (M == 1) {
    static const RowLoop<T, Log> row_fn = row_loop<T, Log>();
    parallel_for(0, P, std::max<int64_t>(1, kParallelGrain / N), [&](int64_t b, int64_t e) {
      std::unique_ptr<A[]> row;
      if (!Log && !std::is_same_v<T, A>) row.reset(new A[N]);
      for (int64_t p = b; p < e; ++p) row_fn(x + p * N, y + p * N, N, row.get());
    });
    return;
  }
  // Columns: e^(x - max) for one row of M values at a time, in a buffer of M.
  parallel_for(0, P, std::max<int64_t>(1, kParallelGrain / (N * M)), [&](int64_t b, int64_t e) {
    std::unique_ptr<A[]> mx(new A[M]), sum(new A[M]), t(new A[M]);
    for (int64_t p = b; p < e; ++p) {
      const T* xb = x + p * N * M;
      T* yb = y + p * N * M;
      std::fill(mx.get(), mx.get() + M, -std::numeric_limits<A>::infinity());
      std::fill(sum.get(), sum.get() + M, A(0));
      for (int64_t i = 0; i < N; ++i) {
        for (int64_t j = 0; j < M; ++j) mx[j] = std::max(mx[j], convert<A>(xb[i * M + j]));
      }
      for (int64_t i = 0; i < N; ++i) {
        for (int64_t j = 0; j < M; ++j) t[j] = convert<A>(xb[i * M + j]) - mx[j];
        exp_in_place(t.get(), M);
        for (int64_t j = 0; j < M; ++j) sum[j] += t[j];
      }
      for (int64_t j = 0; j < M; ++j) sum[j] = Log ? std::log(sum[j]) : A(1) / sum[j];
      for (int64_t i = 0; i < N; ++i) {
        if constexpr (Log) {
          for (int64_t j = 0; j < M; ++j) yb[i * M + j] = convert<T>((convert<A>(xb[i * M + j]) - mx[j]) - sum[j]);
        } else {
          for (int64_t j = 0; j < M; ++j) t[j] = convert<A>(xb[i * M + j]) - mx[j];
          exp_in_place(t.get(), M);
          for (int64_t j = 0; j < M; ++j) yb[i * M + j] = convert<T>(t[j] * sum[j]);
        }
      }
    }
  });
}

template <bool Log>
Tensor softmax_kernel(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  SoftmaxPlan plan = prepare_softmax(Log ? "log_softmax" : "softmax", self, dim, dtype);
  visit_dtype(plan.input.dtype(), Log ? "log_softmax" : "softmax", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T> || is_reduced_float_v<T>) softmax_loop<T, Log>(plan);
  });
  return plan.out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("softmax.int", dispatch::named_kernel(&softmax_kernel<false>, "softmax"));
  m.impl("log_softmax.int", dispatch::named_kernel(&softmax_kernel<true>, "log_softmax"));
}

}  // namespace anatomy::cpu
