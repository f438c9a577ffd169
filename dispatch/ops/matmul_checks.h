// The matrix products' shared front half: argument checks and result metadata for mm, bmm,
// addmm and baddbmm, used by every backend's kernels (the CPU runs BLAS, Meta stops here).
#pragma once

#include "anatomy/core/tensor.h"

namespace anatomy {

// The dtype a product of two `t` operands returns: int8 x int8 accumulates and returns int32
// (the one documented exception); every other dtype returns itself.
DType product_dtype(DType t);

// Both operands of a product: same device, same dtype (TypeError naming both otherwise), not
// bool. `op` names the operator in errors.
void check_product_dtypes(const char* op, const Tensor& a, const Tensor& b);

// mm: [n, k] @ [k, m]. Checks everything and returns the result shape {n, m}.
DimVector check_mm(const char* op, const Tensor& self, const Tensor& mat2);
// bmm: [b, n, k] @ [b, k, m] -> {b, n, m}.
DimVector check_bmm(const char* op, const Tensor& self, const Tensor& mat2);

// addmm / baddbmm's `self`: same dtype as the product's operands and broadcastable to `shape`;
// beta and alpha are integral for integral tensors (no silent truncation).
void check_addmm_self(const char* op, const Tensor& self, const Tensor& mat1, IntArrayRef shape, const Scalar& beta,
                      const Scalar& alpha);

// An out= tensor: exactly the result's shape and dtype (mm does not resize or cast), on the
// inputs' device, no internal overlap and no memory shared with an input (BLAS reads the inputs
// while it writes the output).
void check_product_out(const char* op, const Tensor& out, IntArrayRef shape, DType dtype, const Tensor& a,
                       const Tensor& b);

}  // namespace anatomy
