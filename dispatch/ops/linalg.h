// Matrix products. fp32 and fp64 go through BLAS (cblas_sgemm / cblas_dgemm), with transposed
// views handed over as transposes, not copies; fp16 and bf16 compute in fp32 and round once;
// int8 x int8 accumulates and returns int32; other integer dtypes accumulate in their own type.
#pragma once

#include <optional>
#include <string_view>

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
Tensor mv(const Tensor& self, const Tensor& vec);      // [n, k] @ [k] -> [n]
// beta * self + alpha * (mat @ vec), self broadcast to [n].
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1);
// beta * self + alpha * sum over b of batch1[b] @ batch2[b].
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
              const Scalar& alpha = 1);
// Sums over dims_self of self paired with dims_other of other; the int form contracts the last
// `dims` dims of self with the first `dims` of other.
Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other);
Tensor tensordot(const Tensor& self, const Tensor& other, int64_t dims = 2);
// Einstein summation: "ij,jk->ik", "bhqd,bhkd->bhqk", "ii->i", "...ij->...ji"; one bmm per
// operand after the first, with permutes and reshapes (no loop per element).
Tensor einsum(std::string_view equation, TensorList tensors);
Tensor kron(const Tensor& self, const Tensor& other);  // Kronecker product, mul's promotion
// 1-D: a matrix with self on diagonal `diagonal`; 2-D: a copy of that diagonal.
Tensor diag(const Tensor& self, int64_t diagonal = 0);
Tensor diag_embed(const Tensor& self, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor trace(const Tensor& self);  // sum of the diagonal (int64 for integers and bool)
// p-norm distances between the rows of x1 [..., P, M] and x2 [..., R, M] -> [..., P, R].
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2, std::optional<int64_t> compute_mode = std::nullopt);

}  // namespace anatomy
