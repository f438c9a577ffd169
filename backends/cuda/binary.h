// Launchers of the element-wise arithmetic kernels (binary.cu), called by binary_cuda.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include "anatomy/backends/cuda/elementwise_layout.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

enum class ArithmeticOp : int8_t { Add, Sub, Mul, Div };

// out = a op b in `dtype` (inputs and output all of it); add and sub scale b by alpha, given as
// a double for floating dtypes and an int64 for integral ones.
void launch_arithmetic(ArithmeticOp op, DType dtype, const ElementwiseArgs<2>& args, double alpha_float,
                       int64_t alpha_int, cudaStream_t stream);

}  // namespace anatomy::cuda
