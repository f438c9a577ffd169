// Launchers of the element-wise binary and ternary kernels, one per family and .cu file, called
// by binary_cuda.cpp with an iteration plan's arguments. Every input has the plan's common dtype;
// the output too, except for comparisons and logical ops (bool).
#pragma once

#include <cuda_runtime_api.h>

#include "anatomy/backends/cuda/elementwise_layout.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// binary.cu: add and sub scale b by alpha, given as a double for floating dtypes and an int64
// for integral ones. Div is true division (floating only: the plan promotes integers).
enum class ArithmeticOp : int8_t { Add, Sub, Mul, Div, DivTrunc, DivFloor };
void launch_arithmetic(ArithmeticOp op, DType dtype, const ElementwiseArgs<2>& args, double alpha_float,
                       int64_t alpha_int, cudaStream_t stream);

// binary_math.cu. Maximum and Minimum also serve clamp with one bound.
enum class MathOp : int8_t { Remainder, Fmod, Pow, Maximum, Minimum, Atan2 };
void launch_binary_math(MathOp op, DType dtype, const ElementwiseArgs<2>& args, cudaStream_t stream);

// binary_compare.cu: bool output, inputs of `dtype`.
enum class CompareOp : int8_t { Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr, LogicalXor };
void launch_compare(CompareOp op, DType dtype, const ElementwiseArgs<2>& args, cudaStream_t stream);

// binary_bitwise.cu: integer and bool dtypes (shifts: integers only).
enum class BitwiseOp : int8_t { And, Or, Xor, LeftShift, RightShift };
void launch_bitwise(BitwiseOp op, DType dtype, const ElementwiseArgs<2>& args, cudaStream_t stream);

// threshold_backward.cu: out = self <= threshold ? 0 : grad_output (args' inputs: grad_output,
// self), numeric dtypes; the threshold as a double for floating dtypes (compared in float for
// fp16 and bf16), an int64 that fits the dtype for integral ones.
void launch_threshold_backward(DType dtype, const ElementwiseArgs<2>& args, double threshold_float,
                               int64_t threshold_int, cudaStream_t stream);

// ternary.cu: where(condition, a, b) with the condition already cast to `dtype` by the plan;
// lerp(a, end, weight) for floating dtypes; clamp(x, min, max) for numeric ones.
enum class TernaryKernelOp : int8_t { Where, Lerp, Clamp };
void launch_ternary(TernaryKernelOp op, DType dtype, const ElementwiseArgs<3>& args, cudaStream_t stream);

}  // namespace anatomy::cuda
