// scatter_reduce: PyTorch's values for every reduce with and without include_self, integer mean's
// floor division, NaN through amax, the order of a bool sum, Meta, and the entry in the op table
// (whose samples check every dtype and layout against an fp64 reference).
#include <cmath>
#include <limits>

#include "anatomy/testing/op_table.h"
#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

namespace {
Tensor ints(std::vector<int64_t> v) {
  return tensor(v, {static_cast<int64_t>(v.size())}, TensorOptions().dtype(DType::Int64));
}
}  // namespace

TEST_CASE("scatter_reduce: every reduce, with and without self, gives PyTorch's values") {
  const Tensor self = tensor({1.0, 2.0, 3.0, 4.0}), index = ints({0, 1, 0, 1, 2, 1});
  const Tensor src = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0});
  CHECK(values(self.scatter_reduce(0, index, src, "sum")) == D{5, 14, 8, 4});
  CHECK(values(self.scatter_reduce(0, index, src, "sum", false)) == D{4, 12, 5, 4});
  CHECK(values(self.scatter_reduce(0, index, src, "prod")) == D{3, 96, 15, 4});
  CHECK(values(self.scatter_reduce(0, index, src, "prod", false)) == D{3, 48, 5, 4});
  CHECK(values(self.scatter_reduce(0, index, src, "mean", false)) == D{2, 4, 5, 4});
  const D mean = values(self.scatter_reduce(0, index, src, "mean"));
  CHECK(mean[0] == doctest::Approx(5.0 / 3));
  CHECK(mean[1] == 3.5);
  CHECK(mean[2] == 4);
  CHECK(values(self.scatter_reduce(0, index, src, "amax")) == D{3, 6, 5, 4});
  CHECK(values(self.scatter_reduce(0, index, src, "amin")) == D{1, 2, 3, 4});
  CHECK(values(self.scatter_reduce(0, index, src, "amin", false)) == D{1, 2, 5, 4});
  // The in-place form writes self and returns it.
  Tensor t = self.clone();
  CHECK(t.scatter_reduce_(0, index, src, "amax", false).is_same(t));
  CHECK(values(t) == D{3, 6, 5, 4});
}

TEST_CASE("scatter_reduce: integer mean floors, amax propagates NaN, a bool sum is or") {
  const Tensor self = ints({1, 2, 3, 4}), index = ints({0, 1, 0, 1, 2, 1});
  const Tensor src = ints({1, 2, 3, 4, 5, 6});
  const Tensor mean = self.scatter_reduce(0, index, src, "mean");
  CHECK(mean.dtype() == DType::Int64);
  CHECK(values(mean) == D{1, 3, 4, 4});
  CHECK(values(ints({-7}).scatter_reduce(0, ints({0}), ints({0}), "mean")) == D{-4});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const D m = values(tensor({0.0, 0.0}).scatter_reduce(0, ints({0, 0, 1}), tensor({nan, 1.0, 2.0}), "amax"));
  CHECK(std::isnan(m[0]));
  CHECK(m[1] == 2);
  const Tensor flags = tensor({false, false}).scatter_reduce(0, ints({0, 0, 1}), tensor({true, true, false}), "sum");
  CHECK(values(flags) == D{1, 0});
}

TEST_CASE("scatter_reduce: bad arguments change nothing and name the operator") {
  Tensor self = tensor({1.0, 2.0});
  CHECK_THROWS_WITH_AS(self.scatter_reduce_(0, ints({0}), tensor({5.0}), "max"),
                       doctest::Contains("scatter_reduce_: reduce must be"), ValueError);
  CHECK_THROWS_AS(self.scatter_reduce_(0, ints({0, 2}), tensor({5.0, 6.0}), "sum", false), IndexError);
  CHECK(values(self) == D{1, 2});
}

TEST_CASE("scatter_reduce: Meta gives self's shape, and the op table has the operator") {
  const Tensor m = empty({3, 4}, TensorOptions().device(kMeta));
  const Tensor idx = empty({2, 4}, TensorOptions().device(kMeta).dtype(DType::Int64));
  const Tensor r = m.scatter_reduce(0, idx, empty({2, 4}, TensorOptions().device(kMeta)), "mean", false);
  CHECK(r.device().type() == DeviceType::Meta);
  CHECK(vec(r.sizes()) == V{3, 4});
  bool found = false;
  for (const testing::OpInfo& info : testing::op_table()) found = found || info.name == "scatter_reduce";
  CHECK(found);
}
