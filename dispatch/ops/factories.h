// The factories: tensors from sizes and options, from values, from memory the caller owns, and
// random ones; their _like forms; seeding.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy {

// ---- factories (BackendSelect picks the backend from `options`' device; CPU by default) ----
Tensor empty(IntArrayRef size, TensorOptions options = {}, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options = {});
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options = {});
// Values start, start+step, ... below end (above end for a negative step). Without a dtype:
// int64 when all three are integers, else the default float.
Tensor arange(const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, TensorOptions options = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions options = {});
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, TensorOptions options = {});
// Uniform in [0, 1), standard normal, and integers in [low, high) from the device's generator.
Tensor rand(IntArrayRef size, TensorOptions options = {});
Tensor randn(IntArrayRef size, TensorOptions options = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions options = {});
Tensor randint(int64_t high, IntArrayRef size, TensorOptions options = {});
// A random permutation of 0 .. n-1 (int64 unless options say otherwise; the dtype must hold n - 1
// exactly), from the device's generator: random keys sorted, so the same seed gives the same
// permutation. A function over rand and argsort, not a registered operator.
Tensor randperm(int64_t n, TensorOptions options = {});

// The _like forms: same shape (and layout, when dense) as `self`; options override dtype/device.
Tensor empty_like(const Tensor& self, TensorOptions options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor zeros_like(const Tensor& self, TensorOptions options = {});
Tensor ones_like(const Tensor& self, TensorOptions options = {});
Tensor full_like(const Tensor& self, const Scalar& fill_value, TensorOptions options = {});
Tensor rand_like(const Tensor& self, TensorOptions options = {});
Tensor randn_like(const Tensor& self, TensorOptions options = {});

// A tensor over memory the caller owns. `deleter` (optional) is called with `data` when the
// last tensor using it goes. Strides default to contiguous.
using BlobDeleter = std::function<void(void*)>;
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {}, BlobDeleter deleter = nullptr);
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {},
                 BlobDeleter deleter = nullptr);

// From a flat vector of values with the given sizes; the dtype is T's unless the options say.
template <typename T>
Tensor tensor(const std::vector<T>& values, IntArrayRef sizes, TensorOptions options = {});

// Copying factories from C++ values: tensor({1.0, 2.0}) is fp32 (the default float, as a
// Python float is), tensor({1, 2}) int64, tensor({true}) bool; nested lists give 2-D tensors
// (tensor({{1, 2}, {3, 4}}), tensor({{1.0}, {2.0}})). The options' dtype and device override.
// The elements of one list must share a type: write tensor({1.0, 2.5}), not tensor({1, 2.5}).
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Tensor tensor(std::initializer_list<T> values, TensorOptions options = {}) {
  const int64_t n = static_cast<int64_t>(values.size());
  IntArrayRef sizes(&n, 1);
  if constexpr (std::is_same_v<T, bool>) {
    return tensor(std::vector<bool>(values), sizes, options);
  } else if constexpr (std::is_floating_point_v<T>) {
    DType fallback = std::is_same_v<T, float> ? DType::Float32 : kDefaultFloat;
    return tensor(std::vector<double>(values.begin(), values.end()), sizes,
                  options.dtype(options.dtype_opt().value_or(fallback)));
  } else {
    return tensor(std::vector<int64_t>(values.begin(), values.end()), sizes, options);
  }
}
Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, TensorOptions options = {});
Tensor tensor(std::initializer_list<std::initializer_list<int64_t>> rows, TensorOptions options = {});
Tensor tensor(std::initializer_list<std::initializer_list<int>> rows, TensorOptions options = {});
// A 0-dim tensor holding `value` (its dtype: bool, int64 or the default float, as a Scalar).
Tensor scalar_tensor(const Scalar& value, TensorOptions options = {});

// Seeds the default generators of every device (CPU and CUDA share the Philox stream).
void manual_seed(uint64_t seed);

}  // namespace anatomy
