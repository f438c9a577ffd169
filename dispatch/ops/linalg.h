// Matrix products. fp32 and fp64 go through BLAS (cblas_sgemm / cblas_dgemm), with transposed
// views handed over as transposes, not copies; fp16 and bf16 compute in fp32 and round once;
// int8 x int8 accumulates and returns int32; other integer dtypes accumulate in their own type.
#pragma once

#include <optional>

#include "anatomy/core/tensor.h"

namespace anatomy {

Tensor mm(const Tensor& self, const Tensor& mat2);  // [n, k] @ [k, m]
Tensor mm_out(const Tensor& out, const Tensor& self, const Tensor& mat2);
Tensor bmm(const Tensor& self, const Tensor& mat2);  // [b, n, k] @ [b, k, m]
Tensor bmm_out(const Tensor& out, const Tensor& self, const Tensor& mat2);
// NumPy's matmul: 1-D operands are promoted (and the added dim removed), batch dims broadcast.
Tensor matmul(const Tensor& self, const Tensor& other);
// beta * self + alpha * (mat1 @ mat2), self broadcast to the product's shape.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
// relu(addmm(...)), or gelu(addmm(...), approximate="tanh") with use_gelu (PyTorch's CUDA
// meaning; its CPU kernel uses the exact gelu). CUDA fuses it into cuBLASLt's epilogue.
Tensor _addmm_activation(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
                         const Scalar& alpha = 1, bool use_gelu = false);
// input @ weight^T + bias (weight: [out_features, in_features]).
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);
Tensor dot(const Tensor& self, const Tensor& other);   // 1-D . 1-D -> 0-dim
Tensor outer(const Tensor& self, const Tensor& vec2);  // 1-D x 1-D -> 2-D

}  // namespace anatomy
