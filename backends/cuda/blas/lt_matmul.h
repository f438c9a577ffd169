// Internal to blas/: included by the room's own files only (its launcher header is launch.h).
// One cuBLASLt matmul with its descriptors and algorithm cached (lt_matmul.cpp): the plan
// cache shared by addmm's bias epilogue, _addmm_activation's ReLU/GELU epilogues
// (addmm_lt.cpp) and the int8 product (gemm_int8_lt.cpp).
//
// Everything is in cuBLAS's column-major terms: D [m, n] = alpha * op_a(A) op_b(B) + beta * C
// (+ the epilogue), C and D one matrix with leading dimension m. Row-major callers pass their
// product transposed, as blas_cuda.cpp explains.
//
//   LtMatmulKey key{...};                        // types, ops, sizes, alignments: the plan's key
//   if (!lt_matmul(key, {&alpha, &beta, a, b, c, d})) ...  // no algorithm: nothing launched
#pragma once

#include <cublasLt.h>

#include <compare>
#include <cstdint>

namespace anatomy::cuda {

struct LtMatmulKey {
  cudaDataType_t ab_type;  // A's and B's elements
  cudaDataType_t d_type;   // C's and D's elements
  cublasComputeType_t compute;
  cudaDataType_t scale;  // alpha's and beta's type
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  cublasOperation_t op_a = CUBLAS_OP_N, op_b = CUBLAS_OP_N;
  int64_t m, n, k;  // every one in [1, INT_MAX]
  int64_t lda, ldb;
  int64_t batches = 1;                 // strided batch: D's matrices are m * n apart
  int64_t stride_a = 0, stride_b = 0;  // element strides between A's (B's) matrices
  uint32_t align_a, align_b, align_d;  // the bytes every matrix address is a multiple of (lt_alignment)
  bool reduced = true;                 // false: split-k partial sums are reduced in the compute type only
  auto operator<=>(const LtMatmulKey&) const = default;
};

// The addresses of one call. alpha and beta are host values of the key's scale type; c is d
// (in place) or ignored when beta is zero; bias is the epilogue's vector (its *_BIAS forms).
struct LtMatmulArgs {
  const void* alpha;
  const void* beta;
  const void* a;
  const void* b;
  void* d;
  const void* bias = nullptr;
};

// The alignment, in bytes and at most 256 (cuBLASLt's default assumption), of every matrix of
// a strided batch starting at `ptr`, `stride_bytes` apart (a stride of 0 adds no condition).
uint32_t lt_alignment(const void* ptr, int64_t stride_bytes = 0);

// Runs the matmul on the current stream with the current device's workspace. Returns false,
// having launched nothing, when cuBLASLt's heuristic has no algorithm for the key.
bool lt_matmul(const LtMatmulKey& key, const LtMatmulArgs& args);

}  // namespace anatomy::cuda
