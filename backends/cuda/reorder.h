// Launchers of the reorder kernels (reorder.cu), called by reorder_cuda.cpp: flip, tril and triu.
// Their outputs are fresh contiguous tensors, so element i of the output is the i-th in
// row-major order; the kernels move bits only and are instantiated per element size (1, 2, 4, 8
// bytes), which covers every dtype.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/strided_layout.h"

namespace anatomy::cuda {

// out[i] = in[layout.offsets(i)] for i in [0, numel). `in` points at the element the walk starts
// from (the last one along each flipped dim), whose strides in `layout` are negated.
void launch_flip(const void* in, void* out, size_t element_size, const StridedLayout<1>& layout, int64_t numel,
                 cudaStream_t stream);

// Matrices of `rows` x `cols` in the last two dims: out[i] = in[layout.offsets(i)] where element
// (r, c) of i's matrix is on the kept side of `diagonal` (upper: c - r >= diagonal, lower:
// c - r <= diagonal), else zero bits (false, 0, +0.0 in every dtype).
void launch_triangle(bool upper, const void* in, void* out, size_t element_size, const StridedLayout<1>& layout,
                     int64_t numel, int64_t rows, int64_t cols, int64_t diagonal, cudaStream_t stream);

}  // namespace anatomy::cuda
