// Launcher of the strided copy kernel (copy.cu), called by copy_cuda.cpp for device-to-device
// copies of one dtype: a gather (contiguous destination), a scatter (contiguous source) or both
// strided. One instantiation per element size (1, 2, 4 or 8 bytes) serves every dtype, since a
// same-dtype copy only moves bits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/strided_layout.h"

namespace anatomy::cuda {

// dst[layout.offsets(i)[0]] = src[layout.offsets(i)[1]] for i in [0, numel). dst and src must
// not overlap.
void launch_strided_copy(void* dst, const void* src, size_t element_size, const StridedLayout<2>& layout, int64_t numel,
                         cudaStream_t stream);

}  // namespace anatomy::cuda
