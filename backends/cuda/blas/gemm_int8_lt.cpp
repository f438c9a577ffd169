// int8 products through cuBLASLt (see launch.h), planned by lt_matmul.cpp's cache.
//
// Note [Exact int8 products on cuBLASLt]
// The exact kernel (gemm_integer.cu) sums int8 products in int32 with wrapping arithmetic, in a
// fixed order. cuBLASLt's integer kernels (CUDA_R_8I inputs, CUDA_R_32I output,
// CUBLAS_COMPUTE_32I, CUDA_R_32I alpha and beta) sum in int32 in their own order, split-k
// included, and say nothing of overflow. Their result is the exact kernel's when no partial
// sum can overflow, whatever the order:
//   - every product is in [-128 * 127, 128 * 128] = [-16256, 2^14], so a partial sum of at most
//     k terms is at most k * 2^14 in magnitude; with beta == 1 the c added is an int8 value
//     (addmm's self has the matrices' dtype), at most 128. k < 2^17 keeps
//     k * 2^14 + 128 < 2^31;
//   - alpha == 1 and beta in {0, 1}: nothing is scaled, so no product of a sum can overflow.
// cuBLASLt's regular-ordering (CUBLASLT_ORDER_COL) IMMA kernels then need (cuBLASLt's
// cublasLtMatmul documentation): 4-byte aligned matrix addresses, leading dimensions that are
// multiples of 4, the "TN" format (A transposed, B not), and m and k multiples of 4. In the
// row-major product run transposed (blas_cuda.cpp), cuBLAS's A is mat2, which must be
// column-major (a transposed view, as linear's w.t()), and B is mat1, which must be row-major.
// A large product whose operands are laid out otherwise (both contiguous, the common mm)
// stages them through copies in the TN layout: a copy reads and writes an operand once, next
// to the product's O(n m k). A small one, or anything outside the conditions, runs the exact
// kernel, as does a key for which cuBLASLt's heuristic finds no algorithm.
#include "anatomy/backends/cuda/blas/launch.h"

#include <algorithm>
#include <climits>
#include <optional>

#include "anatomy/backends/cuda/blas/gemm_operand.h"
#include "anatomy/backends/cuda/blas/lt_matmul.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::cuda {
namespace {

constexpr int64_t kMaxExactK = (int64_t{1} << 17) - 1;  // Note [Exact int8 products on cuBLASLt]
// Products at least this large (n * m * k multiply-adds) stage operands into the TN layout.
constexpr double kStageWork = 16777216.0;  // 256^3

// The leading dimension cuBLASLt's IMMA kernels would read `t` [B, rows, cols] with, as
// cuBLAS's operand `op`, or nullopt when its layout does not meet their conditions.
std::optional<int64_t> imma_ld(const Tensor& t, cublasOperation_t op) {
  const auto l = cublas_layout(t);
  if (!l || l->op != op || l->ld % 4 != 0 || l->ld > INT_MAX) return std::nullopt;
  const int64_t batches = t.sizes()[0], stride = batches > 1 ? t.strides()[0] : 0;
  if (batches > 1 && stride <= 0) return std::nullopt;  // a broadcast batch: staged
  if (lt_alignment(t.data_ptr(), stride) < 4) return std::nullopt;
  return l->ld;
}

Tensor row_major_copy(const Tensor& t) {
  Tensor c = empty(t.sizes(), t.options());
  c.copy_(t);
  return c;
}
// [B, rows, cols] stored as [B, cols, rows]: each matrix column-major.
Tensor column_major_copy(const Tensor& t) {
  Tensor c = empty({t.sizes()[0], t.sizes()[2], t.sizes()[1]}, t.options());
  c.copy_(t.transpose(1, 2));
  return c.transpose(1, 2);
}

}  // namespace

bool gemm_int8_lt(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const Scalar& beta) {
  const int64_t batches = c.sizes()[0], n = c.sizes()[1], m = c.sizes()[2], k = a.sizes()[2];
  const int64_t be = beta.to<int64_t>();
  if (alpha.to<int64_t>() != 1 || (be != 0 && be != 1)) return false;
  if (k < 1 || k > kMaxExactK || n < 1 || m % 4 != 0 || m == 0 || k % 4 != 0) return false;
  if (std::max({n, m, batches}) > INT_MAX || lt_alignment(c.data_ptr(), n * m * 4) < 4) return false;

  Tensor mat1 = a, mat2 = b;
  std::optional<int64_t> ld1 = imma_ld(mat1, CUBLAS_OP_N), ld2 = imma_ld(mat2, CUBLAS_OP_T);
  if (!ld1 || !ld2) {
    const double work =
        static_cast<double>(batches) * static_cast<double>(n) * static_cast<double>(m) * static_cast<double>(k);
    if (work < kStageWork) return false;
    if (!ld1) ld1 = imma_ld(mat1 = row_major_copy(a), CUBLAS_OP_N);
    if (!ld2) ld2 = imma_ld(mat2 = column_major_copy(b), CUBLAS_OP_T);
    if (!ld1 || !ld2) return false;  // not reached: fresh copies meet the conditions
  }

  LtMatmulKey key{};
  key.ab_type = CUDA_R_8I;
  key.d_type = CUDA_R_32I;
  key.compute = CUBLAS_COMPUTE_32I;
  key.scale = CUDA_R_32I;
  key.op_a = CUBLAS_OP_T;  // cuBLAS's A is mat2, B is mat1 (the transposed row-major product)
  key.op_b = CUBLAS_OP_N;
  key.m = m;
  key.n = n;
  key.k = k;
  key.lda = *ld2;
  key.ldb = *ld1;
  key.batches = batches;
  key.stride_a = batches > 1 ? mat2.strides()[0] : 0;
  key.stride_b = batches > 1 ? mat1.strides()[0] : 0;
  key.align_a = lt_alignment(mat2.data_ptr(), key.stride_a);
  key.align_b = lt_alignment(mat1.data_ptr(), key.stride_b);
  key.align_d = lt_alignment(c.data_ptr(), batches > 1 ? n * m * 4 : 0);
  const int32_t al = 1, bet = static_cast<int32_t>(be);
  return lt_matmul(key, {&al, &bet, mat2.data_ptr(), mat1.data_ptr(), c.data_ptr()});
}

}  // namespace anatomy::cuda
