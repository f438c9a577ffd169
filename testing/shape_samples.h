// Helpers of the op-table entries of the reordering, sorting and scan operators
// (testing/ops_shape.cpp, testing/ops_scans.cpp): their dtypes, inputs in several layouts, inputs
// with ties and NaNs, single-tensor samples and bad inputs, and walks over the rows along a dim.
#pragma once

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {

inline const std::vector<DType> kAll = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                                        DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using Shape = std::vector<int64_t>;

// A random tensor of `shape` in one of three layouts: "contiguous"; "transposed" (the last two
// dims swapped in memory); "offset" (a strided view starting inside a larger storage).
inline Tensor laid_out(const std::string& layout, Shape shape, DType dtype, const Domain& d = {}) {
  if (layout == "transposed") {
    Shape swapped = shape;
    std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
    return random_tensor(swapped, dtype, d).transpose(-1, -2);
  }
  if (layout == "offset") {
    Shape big = shape;
    const int64_t last = static_cast<int64_t>(shape.size()) - 1;
    if (last > 0) big[0] += 1;
    big[last] = 2 * big[last] + 1;
    Tensor t = random_tensor(big, dtype, d);
    if (last > 0) t = t.slice(0, 1);
    return t.slice(last, 1, std::nullopt, 2);
  }
  return random_tensor(shape, dtype, d);
}

// make_sample and make_error for the one tensor these operators take.
inline SampleInput sample(std::string label, Tensor t, std::vector<int64_t> dims = {}, std::vector<int64_t> ints = {},
                          std::vector<double> scalars = {}) {
  return make_sample(std::move(label), {std::move(t)}, std::move(dims), std::move(ints), std::move(scalars));
}
inline ErrorInput bad(std::string label, Tensor t, const std::type_info& error, std::vector<std::string> needles,
                      std::vector<int64_t> dims = {}, std::vector<int64_t> ints = {},
                      std::vector<double> scalars = {}) {
  return make_error(std::move(label), {std::move(t)}, error, std::move(needles), std::move(dims), std::move(ints),
                    std::move(scalars));
}

// Values from {0, 1, 2} in `dtype`: many ties, to check that sorting is stable.
inline Tensor with_ties(Shape shape, DType dtype) {
  Domain d;
  d.int_low = 0;
  d.int_high = 3;
  return random_tensor(shape, DType::Int64, d).to(dtype);
}

// Floating values with NaNs at fixed positions (and a repeated value).
inline Tensor with_nans(DType dtype) {
  return tensor(std::vector<double>{1.5, kNaN, -2.0, 3.0, kNaN, 1.5, 0.25, -7.0, kNaN, 3.0, -2.0, 0.5}, {2, 6},
                DType::Float64)
      .to(dtype);
}

// A RefTensor seen with a 0-dim shape as one element along dim 0.
inline RefTensor at_least_1d(RefTensor t) {
  if (t.shape.empty()) t.shape = {1};
  return t;
}

// Calls fn(index) for the first element of every row along `dim` (index[dim] == 0).
inline void for_each_row(const Shape& shape, int64_t dim, const std::function<void(const std::vector<int64_t>&)>& fn) {
  Shape outer = shape;
  outer[dim] = 1;
  if (shape[dim] == 0) {
    // Rows of no elements: nothing to visit, but the loop over outer must not run either.
    return;
  }
  for_each_index(outer, fn);
}

inline int64_t wrap(int64_t dim, int64_t ndim) { return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim; }

}  // namespace anatomy::testing
