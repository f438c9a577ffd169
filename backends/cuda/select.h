// Launchers of nonzero and masked_select (select.cu), called by select_cuda.cpp. Both have a
// result size that depends on the data, so each runs in two steps: count (a CUB reduction of the
// selection flags into one int64 on the device, which the host then reads), and, once the result
// is allocated, select (CUB's order-preserving DeviceSelect::Flagged).
//
// The CUB calls need temporary storage, which comes from the caching allocator on the host side.
// So every launcher here works like CUB's own entry points: called with temp == nullptr it only
// writes the number of bytes it needs into temp_bytes; called again with that much memory it
// queues the work on `stream`.
//
// Elements are read as raw words of their element size (1, 2, 4 or 8 bytes): an element is
// nonzero when its bits, with the sign bit cleared for floating dtypes (so -0 is zero and NaN is
// not), are not all zero, which is convert<bool> of every dtype.
//
// Each operand is one pointer and one stride: element i (row-major) is at data + i * stride.
// CUB copies its input iterators freely, so they must stay small; an operand that is not one
// strided run (select_cuda.cpp) is made contiguous first.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/strided_layout.h"

namespace anatomy::cuda {

// nonzero: *count = the number of nonzero elements among data[i * stride], i in [0, numel).
void nonzero_count(void* temp, size_t& temp_bytes, const void* data, int64_t stride, size_t element_size, bool floating,
                   int64_t numel, int64_t* count, cudaStream_t stream);
// nonzero: positions[0..count) = the row-major indices i of the nonzero elements, in order;
// *num_selected gets the count again (CUB writes it; nobody reads it).
void nonzero_positions(void* temp, size_t& temp_bytes, const void* data, int64_t stride, size_t element_size,
                       bool floating, int64_t numel, int64_t* positions, int64_t* num_selected, cudaStream_t stream);

// The row-major shape of nonzero's input (not merged: each dim gives one output column).
struct RowMajorShape {
  int ndim = 0;
  int64_t sizes[kMaxDims];
};
// nonzero: out[k * ndim + d] = coordinate d of positions[k] in `shape`, for k in [0, count).
void launch_nonzero_coordinates(const int64_t* positions, int64_t count, const RowMajorShape& shape, int64_t* out,
                                cudaStream_t stream);

// masked_select: *count = the number of true elements among mask[i * mask_stride], i in [0, numel)
// (self and the mask broadcast to one shape).
void masked_select_count(void* temp, size_t& temp_bytes, const uint8_t* mask, int64_t mask_stride, int64_t numel,
                         int64_t* count, cudaStream_t stream);
// masked_select: out[0..count) = self[i * self_stride] for the i, in order, whose mask element is true.
void masked_select_values(void* temp, size_t& temp_bytes, const void* self, int64_t self_stride, size_t element_size,
                          const uint8_t* mask, int64_t mask_stride, int64_t numel, void* out, int64_t* num_selected,
                          cudaStream_t stream);

}  // namespace anatomy::cuda
