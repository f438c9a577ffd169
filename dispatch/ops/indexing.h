// Shape and data movement: joining, selecting by index, scattering, masking, sorting, scans and
// padding. Index tensors are int64 (int32 accepted); an index out of range raises IndexError
// naming the operator, the index and the size, and writes nothing.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy {

Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
// A copy of self with src's values written at index along dim (scatter_add: added).
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
// A copy of self with src's values combined into it at index along dim: reduce is "sum", "prod",
// "mean", "amax" or "amin"; include_self=false leaves self's own values out of the elements that
// receive any (docs/ops.md).
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self = true);
Tensor scatter_reduce_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                       bool include_self = true);

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_fill_(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_select(const Tensor& self, const Tensor& mask);   // 1-D
Tensor nonzero(const Tensor& self);                             // [count, ndim] int64
Tensor take(const Tensor& self, const Tensor& index);           // index into the flattened self
Tensor embedding(const Tensor& weight, const Tensor& indices);  // rows of weight

Tensor repeat(const Tensor& self, IntArrayRef repeats);
Tensor flip(const Tensor& self, IntArrayRef dims);
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims = {});
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);
Tensor tril_(const Tensor& self, int64_t diagonal = 0);
Tensor triu_(const Tensor& self, int64_t diagonal = 0);
// repeat with the repeats padded by leading 1s to the tensor's dims.
Tensor tile(const Tensor& self, IntArrayRef dims);
// Each element along dim (of the flattened input without a dim) repeated repeats[i] times; the
// repeats-only form gives the indices: 0 repeats[0] times, 1 repeats[1] times, ... (int64).
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size = std::nullopt);
Tensor repeat_interleave(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
// pad = (left of the last dim, right of the last dim, left of the one before, ...); negative
// amounts crop.
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value = 0);
// pad (the same list) with mode "constant" (the value, default 0), "reflect" (mirrored about
// the edge, each pad smaller than its dim), "replicate" (the edge repeated) or "circular"
// (wrapped around, each pad at most its dim); the last three take non-negative pads and no value.
Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode = "constant",
           std::optional<double> value = std::nullopt);

// Stable sort: (values, int64 indices).
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);
// In place: the running sum (product) in self's dtype, as cumsum(self, dim, self's dtype) (of
// bool: the running or (and)); `dtype`, if given, must be self's.
Tensor cumsum_(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod_(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);
// The running max / min along dim and the int64 index where each was taken: among equal values
// the latest, and from the first NaN on, NaN at the latest NaN's index.
std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim);
// log(cumsum(exp(self))) without overflow; floating dtypes only.
Tensor logcumsumexp(const Tensor& self, int64_t dim);
// int64 [..., num_classes]; num_classes = -1 takes max(self) + 1.
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);

// Positions in sorted rows (numpy's searchsorted): for each value of self, the first index i of
// its row of sorted_sequence with sequence[i] >= value (side "left", the default) or > value
// (side "right" or right = true). sorted_sequence is 1-d (one row for every value) or has self's
// leading dims (each row of values searches its own row); sorter, int64 of sorted_sequence's
// shape, gives the ascending order of an unsorted sequence. The two promote to a common dtype;
// the result is int64 (int32 with out_int32) of self's shape.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt,
                    const std::optional<Tensor>& sorter = std::nullopt);
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt,
                    const std::optional<Tensor>& sorter = std::nullopt);
// searchsorted with the arguments swapped and 1-d boundaries: the bucket of each value.
Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32 = false, bool right = false);
Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32 = false, bool right = false);

// Advanced indexing, as self[indices] in NumPy: one entry per leading dim, an undefined Tensor
// for a full slice, an integer tensor to pick positions or a bool mask to pick by mask.
Tensor index(const Tensor& self, const std::vector<Tensor>& indices);
// self[indices] = values (broadcast); accumulate adds instead (repeated indices add up).
Tensor index_put_(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                  bool accumulate = false);
Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false);

// By index along one dim (dispatch/ops/index_by_dim.cpp, over index_put_ and gather). `index`
// is an int64 or int32 vector; source has self's dtype and self's shape with dim's size the
// index's length. index_fill: those slices set to value; index_copy: set to source's slices
// (with repeated indices one write wins); index_add: source * alpha added (repeated indices add
// up).
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_fill_(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);  // a 0-dim value
Tensor index_fill_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
Tensor index_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
// self where mask (broadcast) is true takes source's first values in row-major order; source has
// at least as many elements as the mask selects. Reads the count on the host (a wait on CUDA).
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);
Tensor masked_scatter_(const Tensor& self, const Tensor& mask, const Tensor& source);
// gather with self and indices broadcast against each other except along dim; without a dim,
// from the flattened self.
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);

}  // namespace anatomy
