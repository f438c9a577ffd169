// Launcher of the masked_fill_ kernel (mask.cu), called by mask_cuda.cpp. As for fill_ (fill.h),
// `value_bits` holds the value already converted to the element type on the host, so there is
// one instantiation per element size (1, 2, 4 or 8 bytes) for all dtypes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/strided_layout.h"

namespace anatomy::cuda {

// For i in [0, numel): data[offsets(i)[0]] = value where mask[offsets(i)[1]] is true (the mask
// is a bool tensor's bytes, already broadcast to data's shape by its strides).
void launch_masked_fill(void* data, size_t element_size, const uint8_t* mask, const StridedLayout<2>& layout,
                        int64_t numel, uint64_t value_bits, cudaStream_t stream);

}  // namespace anatomy::cuda
