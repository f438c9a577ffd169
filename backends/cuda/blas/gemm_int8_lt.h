// int8 x int8 -> int32 products on cuBLASLt's integer tensor-core (IMMA) kernels
// (gemm_int8_lt.cpp), for the cases where their result is provably the exact kernel's
// (gemm_integer.cu): blas_cuda.cpp tries this first and runs the exact kernel when it declines.
#pragma once

#include "anatomy/core/tensor.h"

namespace anatomy::cuda {

// c[i] = beta * c[i] + alpha * a[i] @ b[i] for int8 a [B, n, k], b [B, k, m] and a contiguous
// int32 c [B, n, m], as blas_cuda.cpp's product_cuda (beta == 0: c is not read; beta == 1: c
// holds the int8 values addmm / baddbmm copied from their int8 self). Returns false, having
// written nothing, unless Note [Exact int8 products on cuBLASLt] holds.
bool gemm_int8_lt(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const Scalar& beta);

}  // namespace anatomy::cuda
