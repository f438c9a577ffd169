// The CPU's matrix-product arithmetic, split by how it computes: BLAS for floating dtypes
// (blas_cpu.cpp), a blocked C++ loop for integers (gemm_integer_cpu.cpp). Both follow the
// compute contract of dispatch/ops/linalg_registration.h: c[i] = beta * c[i] + alpha * a[i] @ b[i]
// over 3-D a [B, n, k], b [B, k, m] and a contiguous c [B, n, m]; beta == 0 never reads c.
#pragma once

#include "anatomy/core/tensor.h"

namespace anatomy::cpu {

// Integer operands (uint8, int8, int32, int64): int8 x int8 accumulates into int32, the others
// in their own type; overflow wraps (two's complement), it is never undefined behavior.
void gemm_integer(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha, const Scalar& beta);

}  // namespace anatomy::cpu
