// Argument checks and result metadata of the reordering, sorting and scan operators, shared by
// their CPU and Meta kernels so both backends reject the same inputs with the same messages and
// agree on the result's shape and dtype.
#pragma once

#include <limits>
#include <vector>

#include "anatomy/core/checked_arith.h"
#include "anatomy/core/dim_vector.h"
#include "anatomy/core/error.h"
#include "anatomy/core/tensor.h"

namespace anatomy::shape {

// flip: which dims are flipped (one flag per dim); each given dim once.
inline std::vector<bool> flipped_dims(const Tensor& self, IntArrayRef dims) {
  std::vector<bool> flipped(static_cast<size_t>(self.dim()), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, self.dim(), "flip");
    if (self.dim() == 0) continue;  // dim 0 / -1 of a 0-dim tensor: nothing to flip
    ANATOMY_CHECK(!flipped[w], ValueError, "flip: dim {} appears more than once in the list of dims", w);
    flipped[w] = true;
  }
  return flipped;
}

// tril / triu work on the last two dims.
inline void check_matrix(const Tensor& self, const char* op) {
  ANATOMY_CHECK(self.dim() >= 2, ValueError, "{}: input must have at least 2 dims, got a {}-dim tensor", op,
                self.dim());
}

// The size of `dim` (a 0-dim tensor counts as one element along dim 0).
inline int64_t size_along(const Tensor& self, int64_t dim) { return self.dim() == 0 ? 1 : self.sizes()[dim]; }

// sort, topk and the scans: the wrapped dim.
inline int64_t checked_dim(const Tensor& self, int64_t dim, const char* op) { return wrap_dim(dim, self.dim(), op); }

inline void check_topk(const Tensor& self, int64_t k, int64_t dim) {
  const int64_t n = size_along(self, dim);
  // A 0-dim result always holds one element, so a 0-dim input takes k = 1 only.
  ANATOMY_CHECK(k >= (self.dim() == 0 ? 1 : 0) && k <= n, ValueError,
                "topk: k ({}) is out of range for dim {} of size {}", k, dim, n);
}

// topk's result shape: self's with `dim` of size k.
inline DimVector topk_shape(const Tensor& self, int64_t k, int64_t dim) {
  DimVector sizes(self.sizes());
  if (self.dim() > 0) sizes[dim] = k;
  return sizes;
}

// cumsum / cumprod: the requested dtype, else int64 for integer and bool inputs (as PyTorch),
// else the input's dtype.
inline DType scan_dtype(DType input, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_integral(input, /*include_bool=*/true) ? DType::Int64 : input;
}

// logcumsumexp: floating inputs only (as PyTorch; there is no dtype argument to cast to).
inline void check_floating_scan(const Tensor& self, const char* op) {
  ANATOMY_CHECK(is_floating(self.dtype()), TypeError, "{}: expects a floating-point tensor, got {}", op,
                name(self.dtype()));
}

// one_hot: an int64 input and num_classes >= -1 (-1: inferred from the data).
inline void check_one_hot(const Tensor& self, int64_t num_classes) {
  ANATOMY_CHECK(self.dtype() == DType::Int64, TypeError, "one_hot: expects an int64 tensor of class values, got {}",
                name(self.dtype()));
  ANATOMY_CHECK(num_classes >= -1, ValueError, "one_hot: num_classes must be -1 or >= 0, got {}", num_classes);
}

// one_hot's checks on the class values, given their least and greatest (lo, hi; ignored for an
// empty input): the class count, num_classes or max + 1 when it is -1. The CPU reads lo and hi
// from the data; CUDA reads them from the device when num_classes is -1 and otherwise checks each
// value in its kernel (backends/cuda/index/one_hot.cu).
inline int64_t one_hot_classes(int64_t num_classes, bool empty_input, int64_t lo, int64_t hi) {
  if (num_classes == -1) {
    ANATOMY_CHECK(!empty_input, ValueError, "one_hot: cannot infer num_classes from an empty tensor; pass num_classes");
    ANATOMY_CHECK(hi < std::numeric_limits<int64_t>::max(), ValueError, "one_hot: class value {} is too large", hi);
    num_classes = hi + 1;
  }
  if (!empty_input) {
    ANATOMY_CHECK(lo >= 0, ValueError, "one_hot: class values must be non-negative, got {}", lo);
    ANATOMY_CHECK(hi < num_classes, ValueError, "one_hot: class value {} is out of range for num_classes {}", hi,
                  num_classes);
  }
  return num_classes;
}

// The result's shape, checked here so that a size the result cannot have is one_hot's error,
// not that of the empty or zeros the kernel makes it with.
inline DimVector one_hot_shape(const Tensor& self, int64_t num_classes) {
  DimVector sizes(self.sizes());
  sizes.push_back(num_classes);
  check_factory_size(sizes, "one_hot");
  return sizes;
}

}  // namespace anatomy::shape
