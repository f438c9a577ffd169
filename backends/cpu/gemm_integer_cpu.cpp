// CPU integer matrix products: a blocked loop accumulating a row of c at a time, parallel over
// rows. Arithmetic runs in the unsigned type of the accumulator's width so that overflow wraps
// like PyTorch's integer kernels instead of being undefined behavior.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "anatomy/backends/cpu/gemm_cpu.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/parallel.h"

namespace anatomy::cpu {
namespace {

// The k dimension is walked in blocks so a block of b's rows stays in cache while every row of
// a in the range uses it.
constexpr int64_t kBlockK = 64;

template <typename In, typename Out>
void gemm_loop(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha_s, const Scalar& beta_s) {
  using U = std::make_unsigned_t<Out>;  // wrapping arithmetic in the accumulator's width
  const int64_t batches = c.sizes()[0], n = c.sizes()[1], m = c.sizes()[2], k = a.sizes()[2];
  const int64_t as0 = a.strides()[0], as1 = a.strides()[1], as2 = a.strides()[2];
  const int64_t bs0 = b.strides()[0], bs1 = b.strides()[1], bs2 = b.strides()[2];
  const In* pa = static_cast<const In*>(a.data_ptr());
  const In* pb = static_cast<const In*>(b.data_ptr());
  Out* pc = static_cast<Out*>(c.data_ptr());  // contiguous
  const U alpha = static_cast<U>(alpha_s.to<int64_t>()), beta = static_cast<U>(beta_s.to<int64_t>());
  const bool use_c = beta != 0;
  // Rows of all batches form one range; the grain keeps a range's work above kParallelGrain
  // multiply-adds.
  const int64_t row_work = std::max<int64_t>(1, m * k);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / row_work);
  parallel_for(0, batches * n, grain, [&](int64_t begin, int64_t end) {
    std::vector<U> acc(static_cast<size_t>(m));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t bi = row / n, i = row % n;
      std::fill(acc.begin(), acc.end(), U(0));
      const In* arow = pa + bi * as0 + i * as1;
      const In* bmat = pb + bi * bs0;
      for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
        const int64_t k1 = std::min(k, k0 + kBlockK);
        for (int64_t kk = k0; kk < k1; ++kk) {
          const U av = static_cast<U>(static_cast<Out>(arow[kk * as2]));
          if (av == 0) continue;
          const In* brow = bmat + kk * bs1;
          if (bs2 == 1) {
            for (int64_t j = 0; j < m; ++j) acc[j] += av * static_cast<U>(static_cast<Out>(brow[j]));
          } else {
            for (int64_t j = 0; j < m; ++j) acc[j] += av * static_cast<U>(static_cast<Out>(brow[j * bs2]));
          }
        }
      }
      Out* crow = pc + row * m;
      for (int64_t j = 0; j < m; ++j) {
        U v = alpha * acc[j];
        if (use_c) v += beta * static_cast<U>(crow[j]);
        crow[j] = static_cast<Out>(v);
      }
    }
  });
}

}  // namespace

void gemm_integer(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const Scalar& beta) {
  switch (a.dtype()) {
    case DType::UInt8:
      return gemm_loop<uint8_t, uint8_t>(c, a, b, alpha, beta);
    case DType::Int8:
      return gemm_loop<int8_t, int32_t>(c, a, b, alpha, beta);
    case DType::Int32:
      return gemm_loop<int32_t, int32_t>(c, a, b, alpha, beta);
    case DType::Int64:
      return gemm_loop<int64_t, int64_t>(c, a, b, alpha, beta);
    default:
      ANATOMY_THROW(TypeError, "mm: no integer kernel for {}", name(a.dtype()));
  }
}

}  // namespace anatomy::cpu
