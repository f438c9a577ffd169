// Launchers of the element-wise unary kernels, one per family and .cu file, called by
// unary_cuda.cpp with an iteration plan's arguments (one input, one output).
#pragma once

#include <cuda_runtime_api.h>

#include "anatomy/backends/cuda/elementwise_layout.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// The non-tensor arguments of the few ops that take any, as doubles exact in the op's dtype:
// nan_to_num's replacements (a = nan, b = posinf, c = neginf, already rounded to the tensor's
// dtype on the host), softplus's beta (a) and threshold (b).
struct UnaryConstants {
  double a = 0, b = 0, c = 0;
};

// unary_basic.cu: the ops that keep the dtype, for every dtype the host lets through (the
// rounding ops and nan_to_num are identities on integers).
enum class BasicUnaryOp : int8_t { Neg, Abs, Sign, Floor, Ceil, Round, Trunc, Relu, NanToNum, BitwiseNot };
void launch_unary_basic(BasicUnaryOp op, DType dtype, const ElementwiseArgs<1>& args, const UnaryConstants& k,
                        cudaStream_t stream);

// unary_basic.cu: a bool output from an input of any dtype.
enum class PredicateOp : int8_t { Isnan, Isinf, Isfinite, LogicalNot };
void launch_predicate(PredicateOp op, DType dtype, const ElementwiseArgs<1>& args, cudaStream_t stream);

// unary_float.cu: exponentials, logarithms, roots and the reciprocal, floating dtypes only (the
// plan promotes integers).
enum class FloatUnaryOp : int8_t { Exp, Exp2, Expm1, Log, Log1p, Log2, Sqrt, Rsqrt, Reciprocal };
void launch_unary_float(FloatUnaryOp op, DType dtype, const ElementwiseArgs<1>& args, cudaStream_t stream);

// unary_activation.cu: trigonometric and activation functions, floating dtypes only.
enum class ActivationOp : int8_t { Sin, Cos, Tan, Tanh, Erf, Sigmoid, Silu, Gelu, GeluTanh, Softplus };
void launch_activation(ActivationOp op, DType dtype, const ElementwiseArgs<1>& args, const UnaryConstants& k,
                       cudaStream_t stream);

}  // namespace anatomy::cuda
