// The argument rules of the indexing operators (gather, scatter, index_select, take, masked_*,
// cat, advanced indexing), shared by every backend's kernels: index dtypes, shape rules and
// result shapes. Nothing here reads tensor data, so the Meta kernels use it too, except
// expand_bool_masks (it calls the nonzero operator of the masks' device); the checks on index
// values (range, wrapping) live with each backend's kernels (backends/cpu/index_utils.h,
// backends/cuda/runtime/index_error.h).
#pragma once

#include <string_view>
#include <vector>

#include "anatomy/core/tensor.h"
#include "anatomy/dispatch/ops/scatter_functors.h"

namespace anatomy {

// Index tensors are int64 or int32; anything else is a TypeError naming op.
void check_index_dtype(const Tensor& index, const char* op);

// gather and scatter treat a 0-dim tensor as one dim of size 1.
inline Tensor as_1d(const Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

// gather: index has self's number of dims and index.size(d) <= self.size(d) for d != dim.
// scatter (src given): also index.size(d) <= src.size(d) for every d, and src's dtype is self's.
// Returns the wrapped dim.
int64_t check_gather_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const char* op);

// scatter_reduce_'s `reduce`: how each value is combined into its target, and whether the sums
// are divided by their counts afterwards ("mean"). "sum", "prod", "mean", "amax" or "amin",
// anything else a ValueError; "mean" of a bool tensor is a TypeError (it has no division).
struct ScatterReduction {
  ScatterMode mode = ScatterMode::Add;
  bool mean = false;
};
ScatterReduction parse_scatter_reduction(std::string_view reduce, DType dtype, const char* op);

// The value a target starts from when scatter_reduce_ leaves self out: 0 (sum, mean), 1 (prod),
// the dtype's lowest value (amax: -inf, or the integer minimum, or false) or its highest (amin).
// A 0-dim tensor of self's dtype on self's device.
Tensor scatter_reduction_identity(const ScatterReduction& r, const Tensor& self);

// index_select: index is 0-dim or 1-D; the result is self's shape with dim's size replaced by
// index.numel() (a 0-dim self takes exactly one index and gives a 0-dim result). Returns the
// wrapped dim and writes the result shape.
int64_t check_index_select(const Tensor& self, int64_t dim, const Tensor& index, DimVector& result_shape);

// embedding: weight is 2-D, indices int64/int32; the result is indices' shape + [weight.size(1)].
DimVector embedding_shape(const Tensor& weight, const Tensor& indices);

// masked_fill_ / masked_select: the mask is bool.
void check_mask_dtype(const Tensor& mask, const char* op);

// Advanced indexing after bool masks have become integer tensors (their nonzero positions): one
// entry per leading dim of self, an undefined entry for a full slice.
struct AdvancedIndexShape {
  std::vector<int64_t> indexed_dims;  // the dims of self that an integer tensor indexes, in order
  std::vector<int64_t> rest_dims;     // the other dims of self, in order
  DimVector index_shape;              // the integer tensors' broadcast shape
  DimVector result_shape;
  // The result seen in (index_shape + rest dims) order: result.permute(result_perm). The
  // indexed block sits where the first indexed dim was when the indexed dims are adjacent, at
  // the front otherwise (NumPy's rule).
  std::vector<int64_t> result_perm;
};
// Checks the entries (integer dtypes, no more than self.dim(), broadcastable: IndexError) and
// computes the shapes; `entries` must already hold no bool masks.
AdvancedIndexShape plan_advanced_index(const Tensor& self, const std::vector<Tensor>& entries, const char* op);

// index.Tensor / index_put_: every entry is undefined (a full slice), bool, int64 or int32
// (TypeError naming op).
void check_advanced_index_dtypes(TensorList indices, const char* op);

// Bool masks become their nonzero positions (the `nonzero` operator, on the mask's device), one
// int64 tensor per dim they cover; other entries pass through. A mask's shape must match the
// dims it covers (IndexError).
std::vector<Tensor> expand_bool_masks(const Tensor& self, TensorList indices, const char* op);

// The walk of advanced indexing in (index block + rest dims) order: its sizes, self's strides
// (0 over the index block) and the offsets table's strides (the table is row-major over the
// index shape; 0 over the rest dims).
void advanced_index_walk(const Tensor& self, const AdvancedIndexShape& plan, DimVector& sizes, DimVector& self_strides,
                         DimVector& offset_strides);

}  // namespace anatomy
