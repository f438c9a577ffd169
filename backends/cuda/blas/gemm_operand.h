// Internal to blas/: included by the room's own files only (its launcher header is launch.h).
// How cuBLAS and cuBLASLt read one operand of a row-major product (blas_cuda.cpp explains the
// transposition): shared by the cuBLAS path and the cuBLASLt bias epilogue.
#pragma once

#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "anatomy/core/tensor.h"

namespace anatomy::cuda {

// The alignment cuBLAS's tensor-core kernels want of every matrix address.
inline constexpr uintptr_t kGemmAlignment = 16;

inline bool is_gemm_aligned(const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % kGemmAlignment == 0; }

// One operand as cuBLAS reads it: the tensor (itself or a copy), its op and leading dimension.
struct GemmOperand {
  Tensor t;
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 1;
};

// How cuBLAS reads the matrices of a 3-D row-major [batch, rows, cols] tensor with element
// strides (rs, cs) in its last two dims: row-major is CUBLAS_OP_N, column-major (a transposed
// view) CUBLAS_OP_T; a dim of size 1 takes any stride. nullopt when neither layout fits.
inline std::optional<GemmOperand> cublas_layout(const Tensor& t) {
  const int64_t rows = t.sizes()[1], cols = t.sizes()[2], rs = t.strides()[1], cs = t.strides()[2];
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= std::max<int64_t>(1, cols))) {
    return GemmOperand{t, CUBLAS_OP_N, rows == 1 ? std::max<int64_t>(1, cols) : rs};
  }
  if ((rows == 1 || rs == 1) && (cols == 1 || cs >= std::max<int64_t>(1, rows))) {
    return GemmOperand{t, CUBLAS_OP_T, cols == 1 ? std::max<int64_t>(1, rows) : cs};
  }
  return std::nullopt;
}

// The CUDA data type of a floating dtype cuBLAS takes (fp32, fp64, fp16, bf16).
inline cudaDataType_t cuda_data_type(DType t) {
  switch (t) {
    case DType::Float32:
      return CUDA_R_32F;
    case DType::Float64:
      return CUDA_R_64F;
    case DType::Float16:
      return CUDA_R_16F;
    default:
      return CUDA_R_16BF;
  }
}

}  // namespace anatomy::cuda
