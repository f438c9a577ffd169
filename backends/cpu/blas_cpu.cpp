// CPU matrix products: mm, bmm, addmm, baddbmm (and their out= forms) over OpenBLAS.
//
// fp32 and fp64 call cblas_sgemm / cblas_dgemm once per matrix of the batch (OpenBLAS 0.3.21,
// Debian 12's, has no gemm_batch; each call is threaded by OpenBLAS itself, whose thread count
// is left at its default: OPENBLAS_NUM_THREADS changes it). An operand whose matrices are
// row-major ([ld, 1] strides) or column-major ([1, ld], a transposed view) goes to BLAS as it
// is, with NoTrans or Trans; any other layout (both strides non-unit, broadcast rows) is copied
// once to a contiguous tensor. fp16 and bf16 convert to fp32, run sgemm, and round once into
// the result. Integers run the loop of gemm_integer_cpu.cpp; bool is refused by the checks.
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "anatomy/backends/cpu/gemm_cpu.h"
#include "anatomy/dispatch/linalg_registration.h"

namespace anatomy::cpu {
namespace {

// How BLAS reads one [rows, cols] matrix with element strides (rs, cs) in row-major terms; a
// dim of size 1 takes any stride.
struct BlasLayout {
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};

std::optional<BlasLayout> blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= std::max<int64_t>(1, cols))) {
    return BlasLayout{CblasNoTrans, rows == 1 ? std::max<int64_t>(1, cols) : rs};
  }
  if ((rows == 1 || rs == 1) && (cols == 1 || cs >= std::max<int64_t>(1, rows))) {
    return BlasLayout{CblasTrans, cols == 1 ? std::max<int64_t>(1, rows) : cs};
  }
  return std::nullopt;
}

// `t` (3-D) as BLAS can read it: itself when its matrices have a BLAS layout whose leading
// dimension fits BLAS's int, else one contiguous copy (whose layout always is one).
Tensor blas_operand(const Tensor& t, BlasLayout& layout) {
  const int64_t rows = t.sizes()[1], cols = t.sizes()[2];
  if (auto l = blas_layout(rows, cols, t.strides()[1], t.strides()[2]); l && l->ld <= INT_MAX) {
    layout = *l;
    return t;
  }
  Tensor c = t.contiguous();
  layout = *blas_layout(rows, cols, c.strides()[1], c.strides()[2]);
  return c;
}

void check_blas_int(int64_t v) {
  ANATOMY_CHECK(v <= INT_MAX, ValueError, "mm: a matrix dimension or leading dimension ({}) exceeds BLAS's 32-bit int",
                v);
}

template <typename T>
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int n, int m, int k, T alpha, const T* a, int lda, const T* b,
          int ldb, T beta, T* c, int ldc) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, n, m, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, n, m, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

// c[i] = beta * c[i] + alpha * a[i] @ b[i] for float or double; c contiguous.
template <typename T>
void gemm_blas(const Tensor& c, const Tensor& a_in, const Tensor& b_in, T alpha, T beta) {
  const int64_t batches = c.sizes()[0], n = c.sizes()[1], m = c.sizes()[2], k = a_in.sizes()[2];
  if (batches == 0 || n == 0 || m == 0) return;
  T* pc = static_cast<T*>(c.data_ptr());
  if (k == 0) {
    // An empty sum: c = beta * c (beta == 0 writes zeros without reading c).
    const int64_t total = c.numel();
    for (int64_t i = 0; i < total; ++i) pc[i] = beta == T(0) ? T(0) : beta * pc[i];
    return;
  }
  // Sizes first, before any copy; the leading dimensions then fit too (blas_operand).
  for (int64_t v : {n, m, k}) check_blas_int(v);
  BlasLayout la{}, lb{};
  const Tensor a = blas_operand(a_in, la), b = blas_operand(b_in, lb);
  const T* pa = static_cast<const T*>(a.data_ptr());
  const T* pb = static_cast<const T*>(b.data_ptr());
  const int64_t sa = a.strides()[0], sb = b.strides()[0], sc = n * m;
  for (int64_t i = 0; i < batches; ++i) {
    gemm<T>(la.trans, lb.trans, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha, pa + i * sa,
            static_cast<int>(la.ld), pb + i * sb, static_cast<int>(lb.ld), beta, pc + i * sc, static_cast<int>(m));
  }
}

void product_cpu(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const Scalar& beta) {
  switch (a.dtype()) {
    case DType::Float32:
      return gemm_blas<float>(c, a, b, alpha.to<float>(), beta.to<float>());
    case DType::Float64:
      return gemm_blas<double>(c, a, b, alpha.to<double>(), beta.to<double>());
    case DType::Float16:
    case DType::BFloat16: {
      // fp32 operands and accumulator; the one rounding is the final copy into c.
      const TensorOptions f32 = TensorOptions().dtype(DType::Float32);
      Tensor c32 = empty(c.sizes(), f32);
      const bool use_c = beta.to<double>() != 0.0;
      if (use_c) c32.copy_(c);
      gemm_blas<float>(c32, a.to(DType::Float32), b.to(DType::Float32), alpha.to<float>(),
                       use_c ? beta.to<float>() : 0.0f);
      c.copy_(c32);
      return;
    }
    default:
      return gemm_integer(c, a, b, alpha, beta);
  }
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { dispatch::register_product_kernels<&product_cpu>(m); }

}  // namespace anatomy::cpu
