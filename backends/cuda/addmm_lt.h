// addmm with its bias added by cuBLASLt's epilogue (addmm_lt.cpp): linear's common case, one
// launch instead of a broadcast copy followed by a product.
#pragma once

#include "anatomy/core/tensor.h"

namespace anatomy::cuda {

// out = self + alpha * mat1 @ mat2 for a 1-D self of out's width and beta == 1 (the
// dispatch::AddmmFused contract: returns false, having written nothing, for anything else).
bool addmm_bias_epilogue(const Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                         const Scalar& beta, const Scalar& alpha);

}  // namespace anatomy::cuda
