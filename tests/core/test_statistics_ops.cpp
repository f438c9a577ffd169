// Statistics, counting and writing by index along one dim: the cases the op table does not
// express (which element gets the gradient, NaN and ties, Meta, what the composites route through).
#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

namespace {
Tensor meta(std::initializer_list<int64_t> shape, DType t = DType::Float32) {
  return empty(shape, TensorOptions().device(kMeta).dtype(t));
}
Tensor longs(std::vector<int64_t> v) {
  return tensor(v, {static_cast<int64_t>(v.size())}, TensorOptions().dtype(DType::Int64));
}
const double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("statistics: median and kthvalue pick by a stable order, NaN last") {
  Tensor x = tensor({3.0, 1.0, 2.0, 1.0, 5.0, 4.0});
  // Lower median of six: the third smallest, 2.0 at index 2.
  CHECK(values(x.median()) == D{2});
  auto [v, i] = x.view({2, 3}).median(1);
  CHECK(values(v) == D{2, 4});
  CHECK(values(i) == D{2, 2});
  // Ties: the k-th among equal values in input order.
  auto [kv, ki] = kthvalue(x, 2);
  CHECK(values(kv) == D{1});
  CHECK(values(ki) == D{3});
  // A NaN makes the median NaN, with the first NaN's index; kthvalue counts NaN as largest.
  Tensor n = tensor({1.0, kNaN, 0.0, kNaN});
  auto [nv, ni] = median(n, 0);
  CHECK(std::isnan(values(nv)[0]));
  CHECK(values(ni) == D{1});
  auto [k3, k3i] = kthvalue(n, 2, 0);
  CHECK(values(k3) == D{1});
  CHECK(values(k3i) == D{0});
  CHECK(std::isnan(values(median(empty({0})))[0]));
}

TEST_CASE("statistics: median's gradient reaches only the chosen element") {
  Tensor x = tensor({3.0, 1.0, 2.0, 1.0}).requires_grad_(true);
  x.median().backward();
  // The lower median is sorted position 1: the second of the two 1.0s in input order.
  CHECK(values(x.grad()) == D{0, 0, 0, 1});
}

TEST_CASE("statistics: nansum, nanmean and var_mean") {
  Tensor x = tensor({1.0, kNaN, 3.0, kNaN}).view({2, 2});
  CHECK(values(nansum(x)) == D{4});
  CHECK(values(nanmean(x, IntArrayRef{1})) == D{1, 3});
  CHECK(values(nanmean(x, IntArrayRef{0}))[0] == 2);
  CHECK(std::isnan(values(nanmean(x, IntArrayRef{0}))[1]));
  auto [var, mean] = var_mean(tensor({1.0, 2.0, 3.0, 4.0}));
  CHECK(values(var)[0] == doctest::Approx(5.0 / 3.0));
  CHECK(values(mean) == D{2.5});
  EXPECT_ERROR(TypeError, nanmean(tensor({1, 2})), "nanmean", "int64");
}

TEST_CASE("counting: unique's inverse rebuilds the input, and its counts add up") {
  Tensor x = tensor({4, 1, 4, 2, 1, 4}).view({2, 3});
  auto [u, inverse, counts] = unique(x, true, true, true);
  CHECK(values(u) == D{1, 2, 4});
  CHECK(vec(inverse.sizes()) == V{2, 3});
  CHECK(values(u.index_select(0, inverse.reshape({-1}))) == values(x));
  CHECK(values(counts) == D{2, 1, 3});
  // The outputs not asked for are empty.
  auto [u2, i2, c2] = unique(x);
  CHECK(i2.numel() == 0);
  CHECK(c2.numel() == 0);
  // Not differentiable: nothing the composite calls records a node.
  Tensor f = tensor({2.0, 1.0, 2.0}).requires_grad_(true);
  CHECK_FALSE(std::get<0>(unique(f)).requires_grad());
  CHECK_FALSE(histc(f, 2).requires_grad());
  CHECK_FALSE(bincount(longs({0, 1}), tensor({0.5, 1.5}).requires_grad_(true)).requires_grad());
  EXPECT_ERROR(NotImplementedError, unique(meta({3})), "unique", "Meta");
  EXPECT_ERROR(NotImplementedError, bincount(meta({3}, DType::Int64)), "bincount", "Meta");
  CHECK(vec(histc(meta({3}), 7).sizes()) == V{7});
}

TEST_CASE("counting: bincount and histc") {
  CHECK(values(bincount(longs({0, 3, 3, 1}))) == D{1, 1, 0, 2});
  CHECK(values(bincount(longs({}), std::nullopt, 3)) == D{0, 0, 0});
  Tensor w = tensor({0.5, 1.0, 2.0});
  Tensor weighted = bincount(longs({2, 0, 2}), w);
  CHECK(weighted.dtype() == DType::Float32);
  CHECK(values(weighted) == D{1.0, 0, 2.5});
  // max goes in the last bin; outside values and NaN are not counted.
  CHECK(values(histc(tensor({-1.0, 1.0, 0.0, 2.0, kNaN}), 2, -1, 1)) == D{1, 2});
  // min == max: the input's own range.
  CHECK(values(histc(tensor({1.0, 2.0, 3.0, 4.0}), 3)) == D{1, 1, 2});
}

TEST_CASE("by index along one dim: index_add accumulates, masked_scatter reads source in order") {
  Tensor x = zeros({2, 3});
  x.index_add_(1, longs({0, 2, 0}), ones({2, 3}), 2);
  CHECK(values(x) == D{4, 0, 2, 4, 0, 2});
  Tensor y = zeros({2, 3});
  y.index_fill_(0, longs({-1}), 7);
  CHECK(values(y) == D{0, 0, 0, 7, 7, 7});
  Tensor z = zeros({2, 2});
  z.masked_scatter_(tensor({true, false, true, true}).view({2, 2}), tensor({1.0f, 2.0f, 3.0f, 4.0f}));
  CHECK(values(z) == D{1, 0, 2, 3});
  // A failed call writes nothing.
  Tensor s = zeros({2, 3});
  const Snapshot before = snapshot(s);
  EXPECT_ERROR(IndexError, s.index_copy_(1, longs({0, 3}), ones({2, 2})), "index_copy_", "3");
  check_unchanged(s, before);
  CHECK(values(take_along_dim(tensor({10.0, 20.0, 30.0}).view({1, 3}), longs({2, 0}).view({2, 1}), 1)) == D{30, 10});
  // The gradient of index_add's source is the gradient at the indexed slices, times alpha.
  Tensor src = ones({2, 2}).requires_grad_(true);
  index_add(zeros({2, 3}), 1, longs({0, 2}), src, 3).sum().backward();
  CHECK(values(src.grad()) == D{3, 3, 3, 3});
}
