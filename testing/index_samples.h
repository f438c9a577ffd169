// What the indexing op-table entries (ops_indexing.cpp, ops_scatter_reduce.cpp) build their
// inputs from: small random tensors in transposed and offset layouts, index tensors (given,
// random, distinct along a dim, strided), samples and expected errors, and the scatter family's
// samples and bad inputs, which scatter, scatter_add and scatter_reduce share.
#pragma once

#include <string>
#include <typeinfo>
#include <vector>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing::index_samples {

using Shape = std::vector<int64_t>;

inline const std::vector<DType> kAll = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                                        DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
// Accumulating ops: bool addition is "or" and fine too, but 8-bit sums are kept small.
inline const std::vector<DType> kSome = {DType::Bool, DType::Int32, DType::BFloat16, DType::Float32, DType::Float64};

// Integer samples in [-9, 10).
Domain small();
Tensor rnd(Shape shape, DType t);
// A 2-D tensor of `shape` that is a transposed (non-contiguous) view.
Tensor transposed(Shape shape, DType t);
// A view with a storage offset: rows 1.. of a larger tensor.
Tensor sliced(Shape shape, DType t);
// An int64 index tensor with the given values (1-D unless a shape is given).
Tensor idx(std::vector<int64_t> v, Shape shape = {});
// The same values as a non-contiguous view (every other element of a longer tensor).
Tensor strided_idx(std::vector<int64_t> v);
// Random indices in [lo, hi) of `shape`.
Tensor random_idx(Shape shape, int64_t lo, int64_t hi);
// Indices of `shape` along `dim`, distinct within each slice along dim (values in [0, size)),
// for the ops where repeated indices would make the result order-dependent.
Tensor distinct_idx(Shape shape, int64_t dim, int64_t size, uint32_t seed);

SampleInput sample(std::string label, std::vector<Tensor> tensors, std::vector<int64_t> ints = {},
                   std::vector<double> scalars = {});
// Bad inputs of in-place forms carry labels starting "in-place" (they run on the sample's tensor).
bool is_inplace_error(const SampleInput& s);
int64_t wrap(int64_t d, int64_t n);
int64_t wrap_index(double v, int64_t size);
ErrorInput bad(SampleInput s, const std::type_info* type, std::vector<std::string> needles);

// The scatter family's samples (self, index, src; ints: the dim): contiguous, smaller index,
// transposed, offset with a transposed index and a larger src, 3-D, int32 index, 0-dim, zero-size
// index. `distinct`: indices distinct along the dim (for scatter, whose repeated writes race).
std::vector<SampleInput> scatter_samples(DType t, bool distinct);
// Their bad inputs for the operator `name` (the messages name `name` + "_", the in-place kernel
// that the functional forms run); `inplace`: the in-place forms' (labels "in-place: ...").
std::vector<ErrorInput> scatter_errors(const std::string& name, bool inplace);

}  // namespace anatomy::testing::index_samples
