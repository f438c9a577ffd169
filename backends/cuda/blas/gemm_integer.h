// The launcher of the integer matrix-product kernel (gemm_integer.cu), called by blas_cuda.cpp:
// c[i] = beta * c[i] + alpha * a[i] @ b[i] with wrapping arithmetic in the accumulator's width,
// as the CPU's gemm_integer_cpu.cpp. cuBLAS has no integer GEMM for these dtypes and layouts.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

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

}  // namespace anatomy::cuda
