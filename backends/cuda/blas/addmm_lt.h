// addmm with its bias added, and optionally ReLU or GELU applied, by cuBLASLt's epilogue
// (addmm_lt.cpp): linear's common case and _addmm_activation's, one launch instead of a
// broadcast copy, a product and an element-wise pass.
#pragma once

#include "anatomy/core/tensor.h"

namespace anatomy::cuda {

// What the epilogue applies after adding the bias.
enum class LtActivation { None, Relu, GeluTanh };

// out = act(self + alpha * mat1 @ mat2) for a 1-D self of out's width, beta == 1 and a
// floating dtype (the dispatch::AddmmFused contract: returns false, having written nothing,
// for anything else). GeluTanh is gelu(x, approximate="tanh"), what CUBLASLT_EPILOGUE_GELU_BIAS
// computes.
bool addmm_lt_epilogue(const Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                       const Scalar& beta, const Scalar& alpha, LtActivation activation);

// addmm's AddmmFused: a small product reads self in place in the small kernel (Note [Small
// products skip cuBLAS]); a larger one takes the bias epilogue.
bool addmm_bias_epilogue(const Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                         const Scalar& beta, const Scalar& alpha);

}  // namespace anatomy::cuda
