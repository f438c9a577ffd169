// CPU matrix products: mm, bmm, addmm, baddbmm (and their out= forms) over oneDNN and OpenBLAS.
//
// fp32 calls oneDNN's sgemm (sgemm_onednn.h), or OpenBLAS's cblas_sgemm for products of at most
// 64^3 multiply-adds and in a build without oneDNN (preferred_cpu_blas_library() can force
// either); fp64 calls cblas_dgemm (OpenBLAS 0.3.21, Debian 12's, has no gemm_batch). On one
// thread oneDNN's sgemm ran 0.94-1.37x OpenBLAS's speed on products beyond 64^3 (1.5-1.8x at
// k = 16-32) and OpenBLAS's was up to 5x faster below, where a call's fixed cost dominates;
// under the engine's splitting oneDNN was 4-44% faster at 16 threads (docs/perf.md "The CPU's
// sgemm: OpenBLAS, BLIS and oneDNN"). An operand whose matrices are row-major ([ld, 1] strides)
// or column-major ([1, ld], a transposed view) goes to the library as it is, with NoTrans or
// Trans; any other layout (both strides non-unit, broadcast rows) is copied once to a
// contiguous tensor. fp16 and bf16 convert to fp32, run sgemm, and round once into the result.
// Integers run the loop of gemm_integer_cpu.cpp; bool is refused by the checks.
//
// Note [One thread pool for products]
// OpenBLAS keeps a pool of its own, whose threads spin for a while after each call; beside the
// engine's intra-op pool that oversubscribes the CPU (on a 2-core machine under load, a small
// MLP's steps stalled 5-10x). So OpenBLAS runs on the thread that calls it (set to one thread
// when the library loads), as oneDNN's sgemm does (sgemm_onednn.cpp), and the engine's pool
// splits a product instead: the matrices of a batch, or one matrix into a grid of result tiles,
// each of at least kProductGrain multiply-adds. A product follows set_num_threads like every
// other kernel, and one of fewer than 2 * kProductGrain multiply-adds (below 128^3, which splits
// in two) runs on the caller. Each element of the
// result comes from one BLAS call over the whole k; BLAS may still pick another kernel (or, by
// the tile's size, another library) for a smaller block, so the last bits can depend on the
// thread count (as with OpenBLAS's threads).
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>

#include "anatomy/backends/cpu/gemm_cpu.h"
#include "anatomy/backends/cpu/sgemm_onednn.h"
#include "anatomy/core/parallel.h"
#include "anatomy/core/precision_switches.h"
#include "anatomy/dispatch/ops/linalg_registration.h"

namespace anatomy::cpu {
namespace {

// Multiply-adds per range of a split product: about 50 us of one core's sgemm, well above the
// cost of handing a range to a pool thread.
constexpr int64_t kProductGrain = int64_t{1} << 20;

// Products of at most this many multiply-adds call OpenBLAS (by default): oneDNN's sgemm costs
// more per call (64^3 about even, 32^3 0.6x, 16^3 0.3x OpenBLAS's speed on one thread).
constexpr int64_t kOneDnnMinProduct = int64_t{64} * 64 * 64;

bool sgemm_on_onednn(int64_t n, int64_t m, int64_t k) {
  switch (preferred_cpu_blas_library()) {
    case CpuBlasLibrary::OpenBLAS:
      return false;
    case CpuBlasLibrary::OneDNN:
      return true;  // still OpenBLAS where oneDNN refuses (Note [oneDNN beside another oneDNN])
    case CpuBlasLibrary::Default:
      break;
  }
  return have_onednn_sgemm() && n * m * k > kOneDnnMinProduct;
}

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
    if (!sgemm_on_onednn(n, m, k) ||
        !onednn_sgemm(ta == CblasTrans, tb == CblasTrans, n, m, k, alpha, a, lda, b, ldb, beta, c, ldc)) {
      cblas_sgemm(CblasRowMajor, ta, tb, n, m, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
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
  // Rows [r0, r1) and columns [c0, c1) of matrix i: the operands' first element moves by the
  // row (a) or column (b) offset in their own layout.
  auto block = [&](int64_t i, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const T* a0 = pa + i * sa + r0 * (la.trans == CblasNoTrans ? la.ld : 1);
    const T* b0 = pb + i * sb + c0 * (lb.trans == CblasNoTrans ? 1 : lb.ld);
    gemm<T>(la.trans, lb.trans, static_cast<int>(r1 - r0), static_cast<int>(c1 - c0), static_cast<int>(k), alpha, a0,
            static_cast<int>(la.ld), b0, static_cast<int>(lb.ld), beta, pc + i * sc + r0 * m + c0, static_cast<int>(m));
  };
  // n * m fits (each is at most INT_MAX); the count of multiply-adds saturates.
  const int64_t per_matrix = n * m > INT64_MAX / k ? INT64_MAX : n * m * k;
  const int threads = get_num_threads();
  if (batches >= threads || per_matrix < 2 * kProductGrain) {
    // Whole matrices per range (ranges of one matrix when each is large).
    const int64_t grain = std::max<int64_t>(1, kProductGrain / std::max<int64_t>(1, per_matrix));
    parallel_for(0, batches, grain, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) block(i, 0, n, 0, m);
    });
    return;
  }
  // Few large matrices: each is cut into a grid of result tiles, one per thread, as square as
  // the thread count allows. Each BLAS call packs the operand blocks its tile reads, so a grid
  // packs A once per tile column and B once per tile row: fewer copies than strips of rows.
  const int64_t tiles = std::min<int64_t>(threads, std::max<int64_t>(1, per_matrix / kProductGrain));
  int64_t tile_rows = std::clamp<int64_t>(
      std::llround(std::sqrt(static_cast<double>(tiles) * static_cast<double>(n) / static_cast<double>(m))), 1,
      std::min(tiles, n));
  const int64_t tile_cols = std::clamp<int64_t>(tiles / tile_rows, 1, m);
  tile_rows = std::min(n, tiles / tile_cols);
  for (int64_t i = 0; i < batches; ++i) {
    parallel_for(0, tile_rows * tile_cols, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t tr = t / tile_cols, tc = t % tile_cols;
        block(i, tr * n / tile_rows, (tr + 1) * n / tile_rows, tc * m / tile_cols, (tc + 1) * m / tile_cols);
      }
    });
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

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  // Note [One thread pool for products]: OpenBLAS computes on the calling thread.
  openblas_set_num_threads(1);
  dispatch::register_product_kernels<&product_cpu>(m);
}

}  // namespace anatomy::cpu
