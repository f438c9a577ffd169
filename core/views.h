// The view kernels: operators that only compute new sizes, strides and offset over the same
// storage. They work for every backend (they never touch data), so dispatch/ops/views.cpp
// registers them as CompositeExplicitAutograd kernels.
#pragma once

#include <optional>
#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy::views {

// A new TensorImpl over `base`'s storage and version counter. ValueError naming `op` when the
// offset in bytes does not fit int64 (see core/checked_arith.h).
Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset, const char* op);

Tensor view(const Tensor& self, IntArrayRef size);
Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& self, IntArrayRef dims);
Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
Tensor squeeze(const Tensor& self);
Tensor squeeze_dim(const Tensor& self, int64_t dim);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor expand(const Tensor& self, IntArrayRef size);
Tensor unfold(const Tensor& self, int64_t dimension, int64_t size, int64_t step);
Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2);
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim);

}  // namespace anatomy::views
