// Adversarial arguments from a seed: mostly valid values (so calls get past the first check and
// reach the arithmetic behind it), some just out of range, and some extreme (INT64_MAX,
// INT64_MIN, 1 << 62, -1). Tensors are small, of every dtype, and often non-contiguous, offset
// or expanded. The same seed gives the same draws on every platform (no std distributions).
#pragma once

#include <cstdint>
#include <vector>

#include "case.h"
#include "catalogue.h"

namespace anatomy_fuzz {

class Gen {
 public:
  explicit Gen(uint64_t seed) : state_(seed) {}
  // The generator of one iteration: cases depend only on (seed, iteration).
  static Gen for_iteration(uint64_t seed, uint64_t iteration);

  uint64_t next();
  int64_t uniform(int64_t lo, int64_t hi);  // inclusive
  bool chance(double p);
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }

  int64_t extreme();                                // INT64_MAX, INT64_MIN, 1 << 62, -1, 1 << 40, ...
  int64_t dim(int64_t ndim);                        // mostly in [-ndim, ndim); ndim 0 takes -1 and 0
  int64_t index(int64_t n);                         // mostly in [-n, n), a position along a dim of size n
  int64_t length(int64_t n);                        // mostly in [0, n]
  int64_t count();                                  // mostly small and non-negative
  int64_t any_int();                                // small of either sign, or extreme
  std::vector<int64_t> shape(int64_t max_dim = 4);  // small sizes, 0 included
  std::vector<int64_t> factory_shape();             // a shape with the odd negative or huge size
  std::vector<int64_t> dims(int64_t ndim);          // a dim list: mostly distinct and valid
  std::vector<int64_t> permutation(int64_t ndim);
  anatomy::DType dtype();  // fp32 most often, then int64, then the rest
  std::optional<anatomy::DType> maybe_dtype();
  Number scalar(anatomy::DType like);  // fits `like` mostly; sometimes nan, inf, huge
  Number any_number();                 // int, float or bool, ordinary or extreme

  // A tensor of this shape with a random layout: contiguous, permuted, stepped, offset or
  // expanded (stride 0). Floating tensors sometimes require grad.
  TensorSpec tensor(anatomy::DType dtype, std::vector<int64_t> sizes);
  TensorSpec tensor();  // random dtype and shape
  // Index values along a dim of size n, in a tensor of this shape: int64 mostly, in range
  // mostly ([-n, n) where the operator takes negative indices, else [0, n)).
  TensorSpec index_tensor(int64_t n, std::vector<int64_t> sizes, bool negative_ok = true);
  // A mask that broadcasts to `sizes` (size-1 dims, extra leading 1s), sometimes one that does not.
  TensorSpec mask_for(const std::vector<int64_t>& sizes);

 private:
  uint64_t state_;
};

}  // namespace anatomy_fuzz
