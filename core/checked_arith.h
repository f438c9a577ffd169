// Overflow-checked int64 arithmetic for sizes, strides, storage offsets and element counts.
//
// Every such number a user can reach (a factory's size, a view's step, a pad, a repeat count)
// goes through these before it becomes metadata: in C++ a signed overflow is undefined, and in
// practice it turns into a negative stride or offset that a later kernel follows out of its
// storage. A failed check is a ValueError naming the operator and the values. The product of a
// shape is checked_numel (core/shape_rules.h). Plain C++ (nvcc compiles the .cu files that
// include core headers); include this only where it is used.
#pragma once

#include <cstddef>
#include <cstdint>

#include "anatomy/core/dim_vector.h"
#include "anatomy/core/memory_format.h"

namespace anatomy {

// a * b and a + b into `out`; false (out unspecified) when the result does not fit int64. For
// callers with a message of their own or a fallback.
[[nodiscard]] inline bool mul_fits(int64_t a, int64_t b, int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
[[nodiscard]] inline bool add_fits(int64_t a, int64_t b, int64_t& out) { return !__builtin_add_overflow(a, b, &out); }

// a * b and a + b, or ValueError "{op}: {what} overflows int64 ({a} * {b})".
int64_t checked_mul(int64_t a, int64_t b, const char* op, const char* what);
int64_t checked_add(int64_t a, int64_t b, const char* op, const char* what);

// The product of the sizes with an empty dim counting as 1: what a contiguous layout of the
// shape spans. Every tensor's shape keeps it within int64, so that its strides exist and any
// product of some of its sizes fits (a reduction's kept dims beside an empty reduced one, the
// dims flatten merges). ValueError naming op and the sizes when it does not fit (PyTorch's
// "Stride calculation overflowed" is this check without the outermost size). Sizes must be
// non-negative.
int64_t checked_span(IntArrayRef sizes, const char* op);

// Row-major strides of `sizes` (core/shape_rules.h's contiguous_strides), checked_span checked.
DimVector checked_contiguous_strides(IntArrayRef sizes, const char* op);
// ValueError naming op, the format and the sizes when `format` is a channels-last one and the
// shape has another number of dims than it lays out (4 for ChannelsLast, 5 for ChannelsLast3d).
void check_memory_format_dims(IntArrayRef sizes, MemoryFormat format, const char* op);
// The same for the strides of a channels-last format (NHWC strides of a 4-D NCHW shape, NDHWC
// strides of a 5-D NCDHW shape); ValueError when the shape has another number of dims.
DimVector checked_channels_last_strides(IntArrayRef sizes, MemoryFormat format, const char* op);

// Checks a view's metadata given by a user (as_strided, empty_strided) and returns its reach:
// offset + the sum over dims of max(size - 1, 0) * stride, the furthest element it would reach
// if no dim were empty. The reach must fit int64 even for an empty view (later views compute
// their offsets from its metadata), and the offset must fit int64 bytes (times element_size).
// A non-empty view's extent, offset + the sum of size * stride, must fit int64 bytes too: a
// strided loop steps once past each dim's end, and a dim of one element may have any stride.
// ValueError naming op, the sizes, strides and offset. Strides and offset must be non-negative.
int64_t checked_view_reach(IntArrayRef sizes, IntArrayRef strides, int64_t offset, size_t element_size, const char* op);

// Whether offset + the sum over dims of size * stride (the offset one step past the last index
// of every dim, where a strided loop ends), times element_size, fits int64. Strides and offset
// must be non-negative.
bool view_extent_fits(IntArrayRef sizes, IntArrayRef strides, int64_t offset, size_t element_size);

// What a factory checks before it allocates: no negative size, and the element count and the
// span fit int64. A non-empty shape's bytes are the allocator's to refuse (OutOfMemoryError).
// ValueError naming op.
void check_factory_size(IntArrayRef sizes, const char* op);

}  // namespace anatomy
