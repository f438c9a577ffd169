// Launchers of the fill kernels (fill.cu), called by fill_cuda.cpp. `value_bits` holds the value
// already converted to the element type on the host, in its first `element_size` bytes, so the
// kernels only need one instantiation per element size (1, 2, 4 or 8 bytes) for all dtypes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/strided_layout.h"

namespace anatomy::cuda {

// `numel` elements starting at `data`, one after another.
void launch_fill_dense(void* data, size_t element_size, int64_t numel, uint64_t value_bits, cudaStream_t stream);
// Elements at data + layout.offsets(i) for i in [0, numel).
void launch_fill_strided(void* data, size_t element_size, const StridedLayout<1>& layout, int64_t numel,
                         uint64_t value_bits, cudaStream_t stream);

}  // namespace anatomy::cuda
