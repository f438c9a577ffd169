// Making a new tensor with fresh storage: what every backend's `empty` kernel does, given its
// allocator. A backend defined outside anatomy uses it too.
#pragma once

#include "anatomy/core/tensor.h"

namespace anatomy {

// A tensor of `sizes` with the given strides (or contiguous / channels_last), memory from
// `allocator`. Checks sizes (negative, overflow) and names `op` in errors.
Tensor make_empty_tensor(IntArrayRef sizes, IntArrayRef strides, DType dtype, Allocator* allocator, const char* op);
Tensor make_empty_tensor(IntArrayRef sizes, DType dtype, Allocator* allocator, MemoryFormat format, const char* op);
// A new tensor of `dtype` laid out as the contiguous tensor `like` (an element-wise op's output
// shaped like its input), without the checks: that layout is known to be valid.
Tensor make_contiguous_tensor_like(const Tensor& like, DType dtype, Allocator* allocator);

// Checks that no two elements of `t` share memory (an expanded tensor does); writing into such
// a tensor is ambiguous, so in-place ops refuse it. ValueError names `op`.
void check_no_internal_overlap(const Tensor& t, const char* op);

// The checks every backend's copy_ makes before writing (self has no internal overlap, src
// broadcasts to self's shape), returning src expanded to self's shape. Errors name copy_.
Tensor checked_copy_source(const Tensor& self, const Tensor& src);

// Whether the memory two tensors can reach intersects: they share storage and the element
// ranges [offset, offset + extent) meet. Conservative (two interleaved views count as
// overlapping); a copy between overlapping tensors goes through a temporary.
bool may_overlap(const Tensor& a, const Tensor& b);

// The index of a strided layout's furthest element + 1 (0 for an empty tensor): how many
// elements its storage must hold. Strides must be non-negative; ValueError naming `op` when
// the extent overflows int64.
int64_t required_storage_elements(IntArrayRef sizes, IntArrayRef strides, const char* op);

}  // namespace anatomy
