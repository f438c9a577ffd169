// CPU: softmax and log_softmax along one dim, over a contiguous [P, N, M] input. Numerically
// stable: the max along the dim is subtracted before exp; fp16/bf16 compute in fp32. When the
// dim is innermost (M == 1) each row is three passes over N contiguous values; otherwise the
// max and sum are accumulated across M contiguous columns at once (vectorized over columns).
#include <cmath>
#include <limits>
#include <memory>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/parallel.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/norm_plan.h"

namespace anatomy::cpu {
namespace {

template <typename T>
using softmax_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T, bool Log>
void softmax_loop(const SoftmaxPlan& plan) {
  using A = softmax_acc_t<T>;
  const int64_t P = plan.outer, N = plan.size, M = plan.inner;
  if (P * N * M == 0) return;
  const T* x = static_cast<const T*>(plan.input.data_ptr());
  T* y = static_cast<T*>(plan.out.data_ptr());
  const A ninf = -std::numeric_limits<A>::infinity();
  if (M == 1) {
    parallel_for(0, P, std::max<int64_t>(1, kParallelGrain / N), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const T* xr = x + p * N;
        T* yr = y + p * N;
        A mx = ninf;
        for (int64_t i = 0; i < N; ++i) mx = std::max(mx, convert<A>(xr[i]));
        A sum = 0;
        for (int64_t i = 0; i < N; ++i) sum += std::exp(convert<A>(xr[i]) - mx);
        if constexpr (Log) {
          // (x - max) - log(sum): subtracting max + log(sum) at once would round that sum first.
          const A log_sum = std::log(sum);
          for (int64_t i = 0; i < N; ++i) yr[i] = convert<T>((convert<A>(xr[i]) - mx) - log_sum);
        } else {
          const A inv = A(1) / sum;
          for (int64_t i = 0; i < N; ++i) yr[i] = convert<T>(std::exp(convert<A>(xr[i]) - mx) * inv);
        }
      }
    });
    return;
  }
  parallel_for(0, P, std::max<int64_t>(1, kParallelGrain / (N * M)), [&](int64_t b, int64_t e) {
    std::unique_ptr<A[]> mx(new A[M]), sum(new A[M]);
    for (int64_t p = b; p < e; ++p) {
      const T* xb = x + p * N * M;
      T* yb = y + p * N * M;
      for (int64_t j = 0; j < M; ++j) mx[j] = ninf, sum[j] = 0;
      for (int64_t i = 0; i < N; ++i) {
        for (int64_t j = 0; j < M; ++j) mx[j] = std::max(mx[j], convert<A>(xb[i * M + j]));
      }
      for (int64_t i = 0; i < N; ++i) {
        for (int64_t j = 0; j < M; ++j) sum[j] += std::exp(convert<A>(xb[i * M + j]) - mx[j]);
      }
      for (int64_t j = 0; j < M; ++j) sum[j] = Log ? std::log(sum[j]) : A(1) / sum[j];
      for (int64_t i = 0; i < N; ++i) {
        for (int64_t j = 0; j < M; ++j) {
          const A v = convert<A>(xb[i * M + j]);
          yb[i * M + j] = convert<T>(Log ? (v - mx[j]) - sum[j] : std::exp(v - mx[j]) * sum[j]);
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
