// Reordering, sorting and scans: exact values the op table cannot state on its own (stable
// order among ties and NaNs, cummax's latest index, dtype rules, accumulation width, wrapping without UB, results that
// never alias the input) and the Meta backend's shapes and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Values with NaN compared as equal to NaN.
bool same(const D& a, const D& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return false;
    if (!std::isnan(a[i]) && a[i] != b[i]) return false;
  }
  return true;
}

Tensor meta(IntArrayRef sizes, DType dtype = DType::Float32) {
  return empty(sizes, TensorOptions().dtype(dtype).device(Device(DeviceType::Meta)));
}
}  // namespace

TEST_CASE("sort keeps equal values in input order in both directions") {
  Tensor x = tensor({2, 1, 2, 1, 0});
  auto [v, i] = x.sort(0);
  CHECK(values(v) == D{0, 1, 1, 2, 2});
  CHECK(values(i) == D{4, 1, 3, 0, 2});
  auto [vd, id] = x.sort(0, /*descending=*/true);
  CHECK(values(vd) == D{2, 2, 1, 1, 0});
  CHECK(values(id) == D{0, 2, 1, 3, 4});
  // -0.0 and +0.0 are equal: they keep their order too.
  Tensor z = tensor({0.0, -0.0, 0.0});
  CHECK(values(std::get<1>(z.sort(0))) == D{0, 1, 2});
}

TEST_CASE("sort and topk order NaN as the largest value") {
  Tensor x = tensor(std::vector<double>{kNaN, 1.0, kNaN, 0.0}, {4});
  auto [v, i] = x.sort(0);
  CHECK(same(values(v), D{0, 1, kNaN, kNaN}));
  CHECK(values(i) == D{3, 1, 0, 2});
  auto [vd, id] = x.sort(0, true);
  CHECK(same(values(vd), D{kNaN, kNaN, 1, 0}));
  CHECK(values(id) == D{0, 2, 1, 3});
  auto [tv, ti] = x.topk(1);
  CHECK(std::isnan(values(tv)[0]));
  CHECK(values(ti) == D{0});
  auto [sv, si] = x.topk(2, -1, /*largest=*/false);
  CHECK(values(sv) == D{0, 1});
  CHECK(values(si) == D{3, 1});
}

TEST_CASE("topk picks the lower index among ties and sorted=false gives index order") {
  Tensor x = tensor({1, 3, 3, 2, 3});
  auto [v, i] = x.topk(2);
  CHECK(values(v) == D{3, 3});
  CHECK(values(i) == D{1, 2});
  auto [uv, ui] = x.topk(3, -1, true, /*sorted=*/false);
  CHECK(values(ui) == D{1, 2, 4});
  CHECK(values(uv) == D{3, 3, 3});
}

TEST_CASE("cumsum and cumprod give int64 for integer and bool inputs and honor dtype") {
  CHECK(tensor({1, 2, 3}, DType::Int8).cumsum(0).dtype() == DType::Int64);
  Tensor b = tensor({true, true, false, true});
  CHECK(b.cumsum(0).dtype() == DType::Int64);
  CHECK(values(b.cumsum(0)) == D{1, 2, 2, 3});
  // int8 values whose sum leaves int8's range: the int64 result holds it.
  CHECK(values(tensor({100, 100, 100}, DType::Int8).cumsum(0)) == D{100, 200, 300});
  Tensor h = tensor({1, 2, 3}).cumprod(0, DType::Float16);
  CHECK(h.dtype() == DType::Float16);
  CHECK(values(h) == D{1, 2, 6});
  CHECK(tensor({1.0, 2.0}, DType::BFloat16).cumsum(0).dtype() == DType::BFloat16);
}

TEST_CASE("cumsum of bf16 accumulates in float") {
  // In bf16 itself a running sum of ones stops growing at 256; from a float accumulator each
  // output is the rounded exact count.
  Tensor x = ones({1000}, DType::BFloat16);
  D got = values(x.cumsum(0));
  CHECK(got[299] == 300);
  CHECK(got[999] == 1000);
}

TEST_CASE("cumsum and cumprod of int64 wrap around without undefined behavior") {
  const int64_t max = std::numeric_limits<int64_t>::max();
  Tensor x = tensor(std::vector<int64_t>{max, 1}, {2});
  Tensor s = x.cumsum(0);
  CHECK(s.data_ptr<int64_t>()[1] == std::numeric_limits<int64_t>::min());
  Tensor p = tensor(std::vector<int64_t>{max, 2}, {2}).cumprod(0);
  CHECK(p.data_ptr<int64_t>()[1] == -2);
}

TEST_CASE("cummax and cummin: the latest index among ties, NaN sticks at the latest NaN's index") {
  Tensor x = tensor({1.0, 3.0, 2.0, 3.0, kNaN, 0.0, kNaN, 5.0});
  auto [v, i] = x.cummax(0);
  CHECK(same(values(v), D{1, 3, 3, 3, kNaN, kNaN, kNaN, kNaN}));
  CHECK(values(i) == D{0, 1, 1, 3, 4, 4, 6, 6});
  auto [mv, mi] = tensor({2, 1, 1, 3, 0, 0}).cummin(0);
  CHECK(values(mv) == D{2, 1, 1, 1, 0, 0});
  CHECK(values(mi) == D{0, 1, 2, 2, 4, 5});
  CHECK(mi.dtype() == DType::Int64);
  auto [bv, bi] = tensor({false, true, false, true}).cummax(0);
  CHECK(bv.dtype() == DType::Bool);
  CHECK(values(bv) == D{0, 1, 1, 1});
  CHECK(values(bi) == D{0, 1, 1, 3});
  auto [sv, si] = tensor({-2.5}).squeeze(0).cummin(-1);
  CHECK(sv.dim() == 0);
  CHECK(values(sv) == D{-2.5});
  CHECK(values(si) == D{0});
}

TEST_CASE("logcumsumexp: stable for large values, -inf stays -inf, floating dtypes only") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(same(values(tensor({-inf, -inf, 0.0, inf, 1.0, kNaN, inf}).logcumsumexp(0)),
             D{-inf, -inf, 0.0, inf, inf, kNaN, kNaN}));
  const D big = values(tensor({1000.0, 1000.0, -1000.0}).logcumsumexp(0));
  CHECK(big[0] == 1000.0);
  CHECK(big[1] == doctest::Approx(1000.0 + std::log(2.0)));
  CHECK(big[2] == doctest::Approx(1000.0 + std::log(2.0)));
  Tensor h = tensor({1.0, 2.0}, DType::Float16).logcumsumexp(0);
  CHECK(h.dtype() == DType::Float16);
  Tensor ints = tensor({1, 2});
  EXPECT_ERROR_UNCHANGED(ints, TypeError, ints.logcumsumexp(0), "logcumsumexp", "int64");
}

TEST_CASE("roll, repeat and constant_pad_nd return new tensors, never views of the input") {
  Tensor x = arange(6).reshape({2, 3});
  Tensor r = x.roll({3}, {1});  // a whole turn
  CHECK(!r.is_same(x));
  CHECK(r.storage().get() != x.storage().get());
  CHECK(values(r) == values(x));
  Tensor rep = x.repeat({1, 1});
  CHECK(rep.storage().get() != x.storage().get());
  Tensor p = constant_pad_nd(x, {0, 0});
  CHECK(p.storage().get() != x.storage().get());
  CHECK(values(p) == values(x));
}

TEST_CASE("one_hot infers num_classes from the largest value") {
  Tensor o = one_hot(tensor({0, 2}));
  CHECK(vec(o.sizes()) == V{2, 3});
  CHECK(o.dtype() == DType::Int64);
  CHECK(values(o) == D{1, 0, 0, 0, 0, 1});
}

TEST_CASE("shape ops on meta tensors give the CPU results' shapes and dtypes") {
  Tensor m = meta({2, 3, 4});
  CHECK(vec(m.repeat({2, 1, 1, 3}).sizes()) == V{2, 2, 3, 12});
  CHECK(vec(m.flip({0, -1}).sizes()) == V{2, 3, 4});
  CHECK(vec(m.roll({1}, {}).sizes()) == V{2, 3, 4});
  CHECK(vec(m.roll({1, -2}, {0, 2}).sizes()) == V{2, 3, 4});
  CHECK(vec(m.tril(1).sizes()) == V{2, 3, 4});
  CHECK(vec(m.triu(-1).sizes()) == V{2, 3, 4});
  CHECK(vec(constant_pad_nd(m, {1, 2, -1, 0}).sizes()) == V{2, 2, 7});
  auto [v, i] = m.sort(1);
  CHECK(vec(v.sizes()) == V{2, 3, 4});
  CHECK(i.dtype() == DType::Int64);
  CHECK(m.argsort().dtype() == DType::Int64);
  auto [tv, ti] = m.topk(2, 1);
  CHECK(vec(tv.sizes()) == V{2, 2, 4});
  CHECK(vec(ti.sizes()) == V{2, 2, 4});
  CHECK(ti.dtype() == DType::Int64);
  CHECK(meta({3}, DType::Int8).cumsum(0).dtype() == DType::Int64);
  CHECK(m.cumprod(2, DType::Float64).dtype() == DType::Float64);
  auto [cv, ci] = meta({2, 3}, DType::Int8).cummax(1);
  CHECK(cv.dtype() == DType::Int8);
  CHECK(ci.dtype() == DType::Int64);
  CHECK(vec(std::get<1>(m.cummin(-1)).sizes()) == V{2, 3, 4});
  CHECK(m.logcumsumexp(0).dtype() == DType::Float32);
  Tensor idx = meta({5}, DType::Int64);
  CHECK(vec(one_hot(idx, 7).sizes()) == V{5, 7});
  for (const Tensor& t : {v, i, tv, ti}) CHECK(t.is_meta());
}

TEST_CASE("shape ops on meta tensors reject what the CPU kernels reject") {
  Tensor m = meta({2, 3});
  EXPECT_ERROR(IndexError, m.flip({2}), "flip");
  EXPECT_ERROR(ValueError, m.flip({0, 0}), "flip", "more than once");
  EXPECT_ERROR(ValueError, meta({3}).tril(), "tril", "2 dims");
  EXPECT_ERROR(IndexError, m.sort(2), "sort");
  EXPECT_ERROR(ValueError, m.topk(4), "topk", "4");
  EXPECT_ERROR(IndexError, m.cumsum(-3), "cumsum");
  EXPECT_ERROR(IndexError, m.cummax(2), "cummax");
  EXPECT_ERROR(IndexError, m.cummin(-3), "cummin");
  EXPECT_ERROR(TypeError, meta({2}, DType::Int32).logcumsumexp(0), "logcumsumexp", "int32");
  EXPECT_ERROR(ValueError, m.repeat({2}), "repeat");
  EXPECT_ERROR(TypeError, one_hot(m, 3), "one_hot", "int64");
  // Its shape would depend on the values, which a meta tensor does not have.
  EXPECT_ERROR(NotImplementedError, one_hot(meta({2}, DType::Int64)), "one_hot", "num_classes");
}

TEST_CASE("shape ops reject bad arguments and leave the input unchanged") {
  Tensor x = arange(6).reshape({2, 3});
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.topk(-1), "topk");
  EXPECT_ERROR_UNCHANGED(x, ValueError, constant_pad_nd(x, {-2, -2}), "constant_pad_nd", "negative size");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.roll({1, 2}, {0}), "roll", "align");
  // topk of a 0-dim tensor takes k = 1 only.
  EXPECT_ERROR(ValueError, tensor({1.0}).squeeze(0).topk(0), "topk");
}
