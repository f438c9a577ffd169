// The launcher of the small floating-point matrix-product kernel (gemm_small.cu), called by
// blas_cuda.cpp and addmm_lt.cpp for products too small for cuBLAS to pay off.
//
// Note [Small products skip cuBLAS]
// cublasGemmEx and cublasLtMatmul spend 5-6 us of host time per call choosing and setting up a
// kernel (bench/cuda_launch.cpp: a [8, 16] @ [16, 16] mm takes 10.5 us of host time where a bare
// launch takes 4.2 us); the product itself takes well under a microsecond of device time. Below
// kSmallGemmWork multiply-adds a product therefore runs one plain tiled kernel instead, launched
// directly: any strides (transposed views need no copy), the bias of addmm read in place through
// its broadcast strides (no copy of it into the result first), fp16 and bf16 accumulated in fp32,
// fp64 in fp64. The sum runs over k in order in one thread, so results are deterministic; they
// differ from cuBLAS's in rounding only (fp32 never uses TF32 here, which allow_tf32 permits but
// does not require).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

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

}  // namespace anatomy::cuda

// Host side (gemm_small_cuda.cpp).
namespace anatomy {
class Tensor;
class Scalar;
}  // namespace anatomy

namespace anatomy::cuda {

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

}  // namespace anatomy::cuda
