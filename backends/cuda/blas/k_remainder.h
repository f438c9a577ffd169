// The launcher of the remainder kernel of a product split around K's misaligned head and odd tail
// (k_remainder.cu, Note [Splitting K around a misaligned head], blas_cuda.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace anatomy::cuda {

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

}  // namespace anatomy::cuda
