// Shape and stride rules shared by views, factories and the operators' result shapes.
#pragma once

#include <optional>

#include "anatomy/core/dim_vector.h"
#include "anatomy/core/memory_format.h"
#include "anatomy/core/scalar.h"

namespace anatomy {

// Whether sizes/strides describe a row-major contiguous layout (dims of size 1 may have any
// stride, as in PyTorch).
bool compute_contiguous(IntArrayRef sizes, IntArrayRef strides);
// Row-major strides for `sizes`.
DimVector contiguous_strides(IntArrayRef sizes);
// The product of sizes; throws ValueError on a negative size or overflow.
int64_t checked_numel(IntArrayRef sizes, const char* op);

// Whether 4-D strides are ordered like NHWC (C fastest, then W, H, N), even with gaps (a sliced
// channels_last tensor): PyTorch's is_channels_last_strides_2d, ambiguous cases going to NCHW.
bool is_channels_last_strides(IntArrayRef sizes, IntArrayRef strides);
// The same for 5-D strides ordered like NDHWC: PyTorch's is_channels_last_strides_3d.
bool is_channels_last_3d_strides(IntArrayRef sizes, IntArrayRef strides);
// Whether (sizes, strides) is exactly the channels-last format `f` (ChannelsLast or
// ChannelsLast3d), dims of size 1 having any stride: is_contiguous(f).
bool compute_channels_last_contiguous(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f);

// Whether `shape` can be broadcast (expanded) to `desired`.
bool is_expandable_to(IntArrayRef shape, IntArrayRef desired);

// Resolves one -1 in `shape` so the product equals `numel`; ValueError (naming `op`) when it
// cannot (two -1s, a negative size, a product that does not divide).
DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op);

// Strides that let a tensor with (sizes, strides) be viewed as `new_sizes` without a copy, or
// nullopt when no such strides exist (PyTorch's computeStride: dims can be split and merged
// only where they are contiguous with each other).
std::optional<DimVector> compute_view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes);

// NumPy broadcasting of two shapes; ValueError naming `op` and both shapes when they clash.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op);

// The number of elements of arange(start, end, step); ValueError for a zero step, a step whose
// sign goes away from end, or non-finite bounds. All-integer arguments are counted in int64
// (exact beyond 2^53), others in double.
int64_t arange_length(const Scalar& start, const Scalar& end, const Scalar& step, const char* op);

}  // namespace anatomy
