// The blas room's launchers, declared once, called by blas_cuda.cpp, addmm_activation_cuda.cpp and
// gemm_small_cuda.cpp: the kernels for what cuBLAS does not cover (gemm_integer.cu, gemm_small.cu,
// k_remainder.cu, pad_operand.cu) and the products through cuBLASLt (addmm_lt.cpp,
// gemm_int8_lt.cpp). nvcc compiles it: Tensor and Scalar are only named, so it includes nothing
// that needs fmt or core beyond dtype.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/core/dtype.h"

namespace anatomy {
class Tensor;
class Scalar;
}  // namespace anatomy

namespace anatomy::cuda {

// ---- gemm_integer.cu ---------------------------------------------------------------------------
// The integer matrix-product kernel: c[i] = beta * c[i] + alpha * a[i] @ b[i] with wrapping
// arithmetic in the accumulator's width, as the CPU's gemm_integer_cpu.cpp. cuBLAS has no integer
// GEMM for these dtypes and layouts.

struct IntegerGemmArgs {
  int64_t batches, n, m, k;
  const void* a;
  int64_t as0, as1, as2;  // element strides of a [batches, n, k]
  const void* b;
  int64_t bs0, bs1, bs2;  // element strides of b [batches, k, m]
  void* c;                // contiguous [batches, n, m]
  int64_t alpha, beta;    // beta == 0: c is not read
};

// `input` is a's and b's dtype: UInt8, Int8 (accumulates and writes Int32), Int32 or Int64.
// Returns false for any other dtype.
bool launch_gemm_integer(DType input, const IntegerGemmArgs& args, cudaStream_t stream);

// ---- gemm_small.cu, gemm_small_cuda.cpp ----------------------------------------------------------
// The small floating-point matrix-product kernel, for products too small for cuBLAS to pay off
// (called by blas_cuda.cpp and addmm_lt.cpp).
//
// Note [Small products skip cuBLAS]
// cublasGemmEx and cublasLtMatmul spend microseconds of host time per call choosing and setting up
// a kernel, more than a bare launch costs (bench/cuda_launch.cpp; docs/perf.md, "The training step
// on CUDA, the allocator's pair and a recorded trace"), while a small product itself takes well
// under a microsecond of device time. Below
// kSmallGemmWork multiply-adds a product therefore runs one plain tiled kernel instead, launched
// directly: any strides (transposed views need no copy), the bias of addmm read in place through
// its broadcast strides (no copy of it into the result first), fp16 and bf16 accumulated in fp32,
// fp64 in fp64. The sum runs over k in order in one thread, so results are deterministic; they
// differ from cuBLAS's in rounding only (fp32 never uses TF32 here, which allow_tf32 permits but
// does not require).

// batches * n * m * k at most this: the small kernel's case.
inline constexpr int64_t kSmallGemmWork = int64_t{1} << 18;  // 64^3

struct SmallGemmArgs {
  int64_t batches, n, m, k;
  const void* a;
  int64_t as0, as1, as2;  // element strides of a [batches, n, k]
  const void* b;
  int64_t bs0, bs1, bs2;  // element strides of b [batches, k, m]
  const void* bias;       // read when beta != 0: [batches, n, m] through these strides (0: broadcast)
  int64_t cs0, cs1, cs2;
  void* c;  // written, contiguous [batches, n, m]; may be `bias` itself (each thread reads, then writes)
  double alpha, beta;
};

// c = alpha * a @ b + beta * bias for fp32, fp64, fp16 and bf16; false for another dtype.
bool launch_gemm_small(DType dtype, const SmallGemmArgs& args, cudaStream_t stream);

// What beta multiplies: elements of a [B, n, m] tensor through these element strides (0 for a
// broadcast dim); it may be the output itself.
struct SmallGemmBias {
  const void* data = nullptr;
  int64_t s0 = 0, s1 = 0, s2 = 0;
};

// c = alpha * a @ b + beta * bias for a [B, n, k], b [B, k, m] and a contiguous c [B, n, m], all
// 3-D or all 2-D (one matrix; B = 1), bias ignored when beta == 0, when the product is small and
// floating-point: returns false, having done nothing, for anything else.
bool try_gemm_small(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const SmallGemmBias& bias,
                    const Scalar& beta);

// ---- k_remainder.cu -----------------------------------------------------------------------------
// The remainder kernel of a product split around K's misaligned head and odd tail (Note [Splitting
// K around a misaligned head], blas_cuda.cpp).

struct KRemainderArgs {
  bool bfloat16;  // else fp16
  // c: rows x cols, rows ldc apart, values adjacent.
  void* c;
  int64_t ldc, rows, cols;
  // a: rows x k, element (i, p) at a[i * a_row_stride + p * a_col_stride]; b: k x cols, element
  // (p, j) at b[p * b_row_stride + j * b_col_stride].
  const void* a;
  int64_t a_row_stride, a_col_stride;
  const void* b;
  int64_t b_row_stride, b_col_stride;
  // The terms c lacks: p in [0, head) and [tail, k).
  int64_t head, tail, k;
  float alpha, beta;
  bool read_c;  // false: beta is 0 and c is not read
};

// c[i][j] = round(beta * c[i][j] + alpha * sum over the remainder's p of a[i][p] * b[p][j]), the
// sum in fp32, one rounding to c's dtype; 16 bytes of c a thread where c's rows and b's allow.
void launch_k_remainder(const KRemainderArgs& args, cudaStream_t stream);

// ---- pad_operand.cu -----------------------------------------------------------------------------
// The operand padding kernel, for an fp16 or bf16 product whose K it rounds up (Note [Padding K
// for the tensor cores]).

struct PadOperandArgs {
  // dst: [batch, rows, cols] of 2-byte elements, rows ld apart, batches batch_stride apart; cols
  // and ld multiples of 8 elements and dst 16-byte aligned, so every row starts on 16 bytes.
  void* dst;
  int64_t batch, rows, cols, ld, batch_stride;
  // src: [batch, src_rows, src_cols] with any element strides, src_rows <= rows and
  // src_cols <= cols; dst's elements outside it are written zero.
  const void* src;
  int64_t src_rows, src_cols;
  int64_t src_batch_stride, src_row_stride, src_col_stride;
};

// Writes every element of dst once (one pass, 16 bytes a thread); nothing waits.
void launch_pad_operand(const PadOperandArgs& args, cudaStream_t stream);

// ---- addmm_lt.cpp -------------------------------------------------------------------------------
// addmm with its bias added, and optionally ReLU or GELU applied, by cuBLASLt's epilogue: linear's
// common case and _addmm_activation's, one launch instead of a broadcast copy, a product and an
// element-wise pass.

// What the epilogue applies after adding the bias.
enum class LtActivation { None, Relu, GeluTanh };

// out = act(self + alpha * mat1 @ mat2) for a 1-D self of out's width, beta == 1 and a
// floating dtype (the dispatch::AddmmFused contract: returns false, having written nothing,
// for anything else). GeluTanh is gelu(x, approximate="tanh"), what CUBLASLT_EPILOGUE_GELU_BIAS
// computes.
bool addmm_lt_epilogue(const Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                       const Scalar& beta, const Scalar& alpha, LtActivation activation);

// addmm's AddmmFused: a small product reads self in place in the small kernel (Note [Small
// products skip cuBLAS]); a larger one takes the bias epilogue.
bool addmm_bias_epilogue(const Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                         const Scalar& beta, const Scalar& alpha);

// ---- gemm_int8_lt.cpp ---------------------------------------------------------------------------
// int8 x int8 -> int32 products on cuBLASLt's integer tensor-core (IMMA) kernels, for the cases
// where their result is provably the exact kernel's (gemm_integer.cu): blas_cuda.cpp tries this
// first and runs the exact kernel when it declines.

// c[i] = beta * c[i] + alpha * a[i] @ b[i] for int8 a [B, n, k], b [B, k, m] and a contiguous
// int32 c [B, n, m], as blas_cuda.cpp's product_cuda (beta == 0: c is not read; beta == 1: c
// holds the int8 values addmm / baddbmm copied from their int8 self). Returns false, having
// written nothing, unless Note [Exact int8 products on cuBLASLt] holds.
bool gemm_int8_lt(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const Scalar& beta);

}  // namespace anatomy::cuda
