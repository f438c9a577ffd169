// The indexing op-table entries' shared inputs (index_samples.h).
#include "anatomy/testing/index_samples.h"

#include <algorithm>
#include <random>

namespace anatomy::testing::index_samples {

Domain small() {
  Domain d;
  d.int_low = -9;
  d.int_high = 10;
  return d;
}

Tensor rnd(Shape shape, DType t) { return random_tensor(std::move(shape), t, small()); }
// A 2-D tensor of `shape` that is a transposed (non-contiguous) view.
Tensor transposed(Shape shape, DType t) { return rnd({shape[1], shape[0]}, t).t(); }
// A view with a storage offset: rows 1.. of a larger tensor.
Tensor sliced(Shape shape, DType t) {
  Shape big = shape;
  big[0] += 1;
  return rnd(big, t).narrow(0, 1, shape[0]);
}
// An int64 index tensor with the given values (1-D unless a shape is given).
Tensor idx(std::vector<int64_t> v, Shape shape) {
  if (shape.empty() && v.size() != 1) shape = {static_cast<int64_t>(v.size())};
  if (shape.empty()) return tensor(v, {}, TensorOptions().dtype(DType::Int64));
  return tensor(v, shape, TensorOptions().dtype(DType::Int64));
}
// The same values as a non-contiguous view (every other element of a longer tensor).
Tensor strided_idx(std::vector<int64_t> v) {
  std::vector<int64_t> spread;
  for (int64_t x : v) spread.insert(spread.end(), {x, 99});
  return idx(spread).slice(0, 0, std::nullopt, 2);
}
// Random indices in [lo, hi) of `shape`.
Tensor random_idx(Shape shape, int64_t lo, int64_t hi) {
  Domain d;
  d.int_low = lo;
  d.int_high = hi;
  return random_tensor(std::move(shape), DType::Int64, d);
}
// Indices of `shape` along `dim`, distinct within each slice along dim (values in [0, size)),
// for the ops where repeated indices would make the result order-dependent.
Tensor distinct_idx(Shape shape, int64_t dim, int64_t size, uint32_t seed) {
  std::mt19937 gen(seed);
  RefTensor r(shape, DType::Int64);
  Shape outer = shape;
  outer[dim] = 1;
  for_each_index(outer, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> pool(size);
    for (int64_t i = 0; i < size; ++i) pool[i] = i;
    std::shuffle(pool.begin(), pool.end(), gen);
    std::vector<int64_t> at = o;
    for (int64_t i = 0; i < shape[dim]; ++i) {
      at[dim] = i;
      r.at(at) = static_cast<double>(pool[i]);
    }
  });
  std::vector<int64_t> v(r.data.begin(), r.data.end());
  return tensor(v, shape, TensorOptions().dtype(DType::Int64));
}

SampleInput sample(std::string label, std::vector<Tensor> tensors, std::vector<int64_t> ints,
                   std::vector<double> scalars) {
  SampleInput s;
  s.label = std::move(label);
  s.tensors = std::move(tensors);
  s.ints = std::move(ints);
  s.scalars = std::move(scalars);
  return s;
}
bool is_inplace_error(const SampleInput& s) { return s.label.rfind("in-place", 0) == 0; }

int64_t wrap(int64_t d, int64_t n) { return d < 0 ? d + n : d; }
int64_t wrap_index(double v, int64_t size) {
  const int64_t i = static_cast<int64_t>(v);
  return i < 0 ? i + size : i;
}

ErrorInput bad(SampleInput s, const std::type_info* type, std::vector<std::string> needles) {
  return ErrorInput{std::move(s), type, std::move(needles)};
}

// The scatter-family samples: `make_index(shape, dim, size)` builds the index.
std::vector<SampleInput> scatter_samples(DType t, bool distinct) {
  auto index = [&](Shape shape, int64_t dim, int64_t size, uint32_t seed) {
    return distinct ? distinct_idx(shape, dim, size, seed) : random_idx(shape, 0, size);
  };
  std::vector<SampleInput> s;
  s.push_back(sample("contiguous, dim 1", {rnd({3, 5}, t), index({3, 3}, 1, 5, 1), rnd({3, 3}, t)}, {1}));
  s.push_back(sample("smaller index, dim 0", {rnd({4, 3}, t), index({3, 2}, 0, 4, 2), rnd({3, 3}, t)}, {0}));
  s.push_back(
      sample("transposed self, dim -1", {transposed({3, 5}, t), index({2, 4}, 1, 5, 3), transposed({2, 4}, t)}, {-1}));
  s.push_back(sample("offset self, transposed index, larger src",
                     {sliced({4, 3}, t), index({3, 2}, 0, 4, 4).t().contiguous().t(), rnd({4, 4}, t)}, {0}));
  s.push_back(sample("3-D", {rnd({2, 4, 3}, t), index({2, 3, 3}, 1, 4, 5), rnd({2, 3, 3}, t)}, {1}));
  s.push_back(sample("int32 index", {rnd({3, 5}, t), index({3, 2}, 1, 5, 6).to(DType::Int32), rnd({3, 2}, t)}, {1}));
  s.push_back(sample("0-dim", {rnd({}, t), idx({0}), rnd({}, t)}, {0}));
  s.push_back(sample("zero-size index", {rnd({3, 4}, t), idx({}, {3, 0}), rnd({3, 0}, t)}, {1}));
  return s;
}

std::vector<ErrorInput> scatter_errors(const std::string& name, bool inplace) {
  const std::string prefix = inplace ? "in-place: " : "";
  const std::string op = name + "_";  // the functional forms run the in-place kernel
  std::vector<ErrorInput> e;
  e.push_back(bad(sample(prefix + "index out of range", {randn({3, 4}), idx({0, 4}, {1, 2}), randn({1, 2})}, {1}),
                  &typeid(IndexError), {op, "4"}));
  e.push_back(bad(sample(prefix + "negative index", {randn({3, 4}), idx({1, -1}, {1, 2}), randn({1, 2})}, {1}),
                  &typeid(IndexError), {op, "-1"}));
  e.push_back(bad(sample(prefix + "float index", {randn({3, 4}), randn({1, 1}), randn({1, 1})}, {1}),
                  &typeid(TypeError), {op, "fp32"}));
  e.push_back(bad(sample(prefix + "index larger than src", {randn({3, 4}), idx({0, 1, 2}, {1, 3}), randn({1, 2})}, {1}),
                  &typeid(ValueError), {op, "[1, 3]", "[1, 2]"}));
  e.push_back(
      bad(sample(prefix + "src dtype differs", {randn({3, 4}), idx({0}, {1, 1}), randn({1, 1}, DType::Float64)}, {1}),
          &typeid(TypeError), {op, "fp64", "fp32"}));
  e.push_back(bad(sample(prefix + "dim out of range", {randn({3, 4}), idx({0}, {1, 1}), randn({1, 1})}, {2}),
                  &typeid(IndexError), {op, "2"}));
  // The functional forms write into a fresh copy, which never overlaps itself.
  if (inplace) {
    e.push_back(
        bad(sample(prefix + "expanded self", {randn({1, 4}).expand({3, 4}), idx({0}, {1, 1}), randn({1, 1})}, {1}),
            &typeid(ValueError), {op}));
  }
  return e;
}

}  // namespace anatomy::testing::index_samples
