// searchsorted, bucketize and mode: the cases the op table does not express (PyTorch's documented
// examples, Meta, a device mismatch, which index mode returns and where its gradient goes).
#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
Tensor longs(std::vector<int64_t> v) {
  return tensor(v, {static_cast<int64_t>(v.size())}, TensorOptions().dtype(DType::Int64));
}
}  // namespace

TEST_CASE("searchsorted and bucketize: PyTorch's documented examples") {
  const Tensor seq = tensor({{1.0, 3.0, 5.0, 7.0, 9.0}, {2.0, 4.0, 6.0, 8.0, 10.0}});
  const Tensor probes = tensor({{3.0, 6.0, 9.0}, {3.0, 6.0, 9.0}});
  CHECK(values(searchsorted(seq, probes)) == D{1, 3, 4, 1, 2, 4});
  CHECK(values(searchsorted(seq, probes, false, true)) == D{2, 3, 5, 1, 3, 4});
  const Tensor row = seq.select(0, 0);
  CHECK(values(searchsorted(row, probes)) == D{1, 3, 4, 1, 3, 4});
  CHECK(values(bucketize(probes, row, false, true)) == D{2, 3, 5, 2, 3, 5});
  // The sorter of an unsorted row: [1, 3, 5, 7, 9] in the order 5, 1, 9, 3, 7.
  const Tensor shuffled = tensor({5.0, 1.0, 9.0, 3.0, 7.0});
  CHECK(values(searchsorted(shuffled, tensor({3.0, 6.0, 9.0}), false, false, std::nullopt, longs({1, 3, 0, 4, 2}))) ==
        D{1, 3, 4});
  // A Scalar gives a 0-dim result; side overrides right's default.
  const Tensor at = searchsorted(row, Scalar(5), false, false, "right");
  CHECK(at.dim() == 0);
  CHECK(at.item<int64_t>() == 3);
  CHECK(bucketize(Scalar(5), row, true).dtype() == DType::Int32);
  // NaN sorts last: a NaN value goes to the first NaN (left) or the end (right).
  const Tensor with_nan = tensor({1.0, 2.0, kNaN, kNaN});
  CHECK(values(searchsorted(with_nan, tensor({kNaN, 1.5, 9.0}))) == D{2, 1, 2});
  CHECK(values(searchsorted(with_nan, tensor({kNaN, 1.5, 9.0}), false, true)) == D{4, 1, 2});
}

TEST_CASE("searchsorted and bucketize on Meta: the CPU's checks and result, no data") {
  const TensorOptions on_meta = TensorOptions().device(kMeta);
  const Tensor out = searchsorted(empty({3, 7}, on_meta), empty({3, 4}, on_meta.dtype(DType::Float16)), true);
  CHECK(out.device().type() == DeviceType::Meta);
  CHECK(out.sizes() == IntArrayRef({3, 4}));
  CHECK(out.dtype() == DType::Int32);
  CHECK(bucketize(Scalar(1.5), empty({5}, on_meta)).dim() == 0);
  EXPECT_ERROR(ValueError, searchsorted(empty({3, 7}, on_meta), empty({2, 4}, on_meta)), "searchsorted", "(3, 7)");
  EXPECT_ERROR(ValueError, bucketize(empty({2}, on_meta), empty({2, 2}, on_meta)), "bucketize", "1-d");
  EXPECT_ERROR(DeviceError, searchsorted(tensor({1.0, 2.0}), empty({2}, on_meta)), "searchsorted", "meta");
}

TEST_CASE("mode: the smallest of the most frequent values, at its last index") {
  // 1 and 3 occur twice each: 1 wins, at its last index 3.
  auto [v, i] = mode(tensor({3.0, 1.0, 3.0, 1.0, 2.0}));
  CHECK(values(v) == D{1});
  CHECK(values(i) == D{3});
  auto [rv, ri] = tensor({{2, 2, 5}, {7, 4, 4}}).mode(1, true);
  CHECK(rv.sizes() == IntArrayRef({2, 1}));
  CHECK(values(rv) == D{2, 4});
  CHECK(values(ri) == D{1, 2});
  // Every NaN is its own value: a row of numbers and NaN gives the most frequent number.
  auto [nv, ni] = mode(tensor({kNaN, 5.0, kNaN, 5.0, 4.0}));
  CHECK(values(nv) == D{5});
  CHECK(values(ni) == D{3});
  EXPECT_ERROR(IndexError, mode(empty({0, 3}), 0), "mode", "dim 0");
  const Tensor m = empty({4, 6}, TensorOptions().device(kMeta));
  CHECK(std::get<0>(mode(m, 0)).sizes() == IntArrayRef({6}));
}

TEST_CASE("mode: the gradient reaches only the element at the returned index") {
  Tensor x = tensor({2.0, 1.0, 2.0, 3.0}).requires_grad_(true);
  std::get<0>(x.mode()).backward();
  CHECK(values(x.grad()) == D{0, 0, 1, 0});
}
