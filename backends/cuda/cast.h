// Launcher of the dtype-conversion kernel (cast.cu), called by copy_cuda.cpp for a copy between
// two dtypes on one device: one kernel reads `src` values and writes `dst` values, any strides.
#pragma once

#include <cuda_runtime_api.h>

#include "anatomy/backends/cuda/elementwise_layout.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// args.output holds `dst` elements, args.inputs[0] `src` ones (dst != src); the values convert
// as the CPU's copy_ converts them (Note [CUDA casts match the CPU's], cast.cu).
void launch_cast(DType dst, DType src, const ElementwiseArgs<1>& args, cudaStream_t stream);

}  // namespace anatomy::cuda
