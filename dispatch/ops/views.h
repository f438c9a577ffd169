// The view operators: each result shares storage with self.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy {

// ---- views (share storage with self) ----
Tensor view(const Tensor& self, IntArrayRef size);
Tensor reshape(const Tensor& self, IntArrayRef shape);
Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset = std::nullopt);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& self);
Tensor permute(const Tensor& self, IntArrayRef dims);
Tensor slice(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, int64_t dim);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor expand(const Tensor& self, IntArrayRef size);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes);
Tensor unfold(const Tensor& self, int64_t dimension, int64_t size, int64_t step);
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
// Source dim i goes to destination[i]; the others keep their order. moveaxis is its alias.
Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination);
Tensor movedim(const Tensor& self, int64_t source, int64_t destination);
Tensor moveaxis(const Tensor& self, IntArrayRef source, IntArrayRef destination);
Tensor moveaxis(const Tensor& self, int64_t source, int64_t destination);
Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1);  // transpose
Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1);    // transpose
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0);    // one select per index
Tensor view_as(const Tensor& self, const Tensor& other);
Tensor reshape_as(const Tensor& self, const Tensor& other);
Tensor expand_as(const Tensor& self, const Tensor& other);
Tensor broadcast_to(const Tensor& self, IntArrayRef size);
std::vector<Tensor> broadcast_tensors(TensorList tensors);
// Expanded views of 0-dim or 1-D inputs; indexing "ij" (the default) or "xy".
std::vector<Tensor> meshgrid(TensorList tensors);
std::vector<Tensor> meshgrid(TensorList tensors, std::string_view indexing);

}  // namespace anatomy
