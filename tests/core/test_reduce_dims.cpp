// Reductions' dim argument: std::nullopt reduces every dim, a list exactly the dims it names,
// and an empty list none (NumPy's axis=()): each output is its one element, reduced.
#include <cmath>
#include <limits>

#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Element-wise equality that counts two NaNs as equal, with the same shape and dtype.
void check_same(const Tensor& got, const Tensor& want, DType dtype) {
  CHECK(got.dtype() == dtype);
  REQUIRE(vec(got.sizes()) == vec(want.sizes()));
  const D g = values(got), w = values(want);
  for (size_t i = 0; i < g.size(); ++i) {
    CAPTURE(i);
    CHECK(((std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i]));
  }
}

Tensor sample_float() {
  return tensor(std::vector<double>{1.5, -2.0, 0.0, kNaN, kInf, -kInf, 3e30, -1e-30}, {2, 4}, DType::Float32);
}

}  // namespace

TEST_CASE("an empty dim list reduces no dim: every reduction gives the one element it reduces") {
  const Tensor x = sample_float();
  const Tensor i = tensor(std::vector<int64_t>{3, 0, -7, 2, 0, 1}, {3, 2}, DType::Int32);
  for (bool keepdim : {false, true}) {
    CAPTURE(keepdim);
    check_same(x.sum({}, keepdim), x, DType::Float32);
    check_same(i.sum({}, keepdim), i.to(DType::Int64), DType::Int64);
    check_same(i.sum({}, keepdim, DType::Float64), i.to(DType::Float64), DType::Float64);
    check_same(x.mean({}, keepdim), x, DType::Float32);
    check_same(x.prod({}, keepdim), x, DType::Float32);
    check_same(i.prod({}, keepdim), i.to(DType::Int64), DType::Int64);
    check_same(x.amax({}, keepdim), x, DType::Float32);
    check_same(i.amin({}, keepdim), i, DType::Int32);
    check_same(x.logsumexp({}, keepdim), x, DType::Float32);
    check_same(i.logsumexp({}, keepdim), i.to(DType::Float32), DType::Float32);
    check_same(x.any({}, keepdim), x != 0, DType::Bool);
    check_same(i.all({}, keepdim), i != 0, DType::Bool);
  }
  check_same(x.count_nonzero({}), (x != 0).to(DType::Int64), DType::Int64);
  check_same(i.count_nonzero({}), (i != 0).to(DType::Int64), DType::Int64);
}

TEST_CASE("norm over no dim is |x| exactly for p > 0, and x != 0 for p = 0") {
  // 3e30 squared overflows fp32: (x^2)^(1/2) would give inf.
  const Tensor x = sample_float();
  for (double p : {1.0, 2.0, 3.0, 0.5, kInf}) {
    CAPTURE(p);
    check_same(x.norm(p, {}), x.abs(), DType::Float32);
    check_same(x.norm(p, {}, true), x.abs(), DType::Float32);
  }
  check_same(x.norm(0, {}), (x != 0).to(DType::Float32), DType::Float32);
  check_same(x.norm(-kInf, {}), x.abs(), DType::Float32);
  EXPECT_ERROR(TypeError, tensor({1, 2}).norm(2, {}), "norm", "int64");
}

TEST_CASE("var and std over no dim: 0 / max(0, 1 - correction), as NumPy's ddof") {
  const Tensor x = tensor(std::vector<double>{1.5, -2.0, 0.0, 4.0}, {2, 2}, DType::Float64);
  const Tensor zero = zeros({2, 2}, DType::Float64);
  const Tensor nan = full({2, 2}, kNaN, DType::Float64);
  check_same(x.var({}, 0), zero, DType::Float64);
  check_same(x.var({}, 0.5), zero, DType::Float64);
  check_same(x.std({}, 0.5, true), zero, DType::Float64);
  check_same(x.var({}, 1), nan, DType::Float64);
  check_same(x.std({}, 2), nan, DType::Float64);
  // Over a dim of size 1 the same values come out.
  check_same(x.unsqueeze(0).var({0}, 0.5), zero, DType::Float64);
  check_same(x.unsqueeze(0).var({0}, 1), nan, DType::Float64);
}

TEST_CASE("std::nullopt reduces every dim, the same as the overloads without a dim") {
  manual_seed(3);
  const Tensor x = randn({3, 4, 5}, DType::Float64);
  check_same(x.sum(std::nullopt, false), x.sum(), DType::Float64);
  check_same(x.mean(std::nullopt, false), x.mean(), DType::Float64);
  check_same(x.prod(std::nullopt, false), x.prod(), DType::Float64);
  check_same(x.any(std::nullopt, false), x.any(), DType::Bool);
  check_same(x.all(std::nullopt, false), x.all(), DType::Bool);
  check_same(x.amax(), x.amax({0, 1, 2}), DType::Float64);
  check_same(x.amin(std::nullopt, true), x.amin({0, 1, 2}, true), DType::Float64);
  check_same(x.var(), x.var({0, 1, 2}), DType::Float64);
  check_same(x.std(std::nullopt, 0, true), x.std({2, 0, 1}, 0, true), DType::Float64);
  check_same(x.norm(), x.norm(2, {0, 1, 2}), DType::Float64);
  check_same(x.logsumexp(std::nullopt), x.logsumexp({0, 1, 2}), DType::Float64);
  check_same(x.count_nonzero(), x.count_nonzero({0, 1, 2}), DType::Int64);
  CHECK(vec(x.sum(std::nullopt, true).sizes()) == V{1, 1, 1});
  CHECK(vec(x.amax().sizes()).empty());
  // The explicit dims against a loop.
  const Tensor s = x.sum({0, 2});
  for (int64_t j = 0; j < 4; ++j) {
    double want = 0;
    for (int64_t a = 0; a < 3; ++a) {
      for (int64_t c = 0; c < 5; ++c) want += x[a][j][c].item<double>();
    }
    CHECK(s[j].item<double>() == doctest::Approx(want).epsilon(1e-12));
  }
}

TEST_CASE("zero-size inputs over no dim are zero-size results, even without an identity") {
  const Tensor e = empty({0, 3});
  for (bool keepdim : {false, true}) {
    CAPTURE(keepdim);
    CHECK(vec(e.amax({}, keepdim).sizes()) == V{0, 3});
    CHECK(vec(e.norm(kInf, {}, keepdim).sizes()) == V{0, 3});
    CHECK(vec(e.sum({}, keepdim).sizes()) == V{0, 3});
    CHECK(vec(e.var({}, 1, keepdim).sizes()) == V{0, 3});
  }
  CHECK(vec(e.count_nonzero({}).sizes()) == V{0, 3});
  // Every dim (or the empty one) of an empty tensor: the extreme has no value.
  EXPECT_ERROR_UNCHANGED(e, IndexError, e.amax(), "amax", "reduction dim 0");
  EXPECT_ERROR_UNCHANGED(e, ValueError, e.norm(kInf), "norm", "inf norm", "dim=None");
  EXPECT_ERROR_UNCHANGED(e, ValueError, e.norm(-kInf, {0}), "norm", "-inf norm", "dim=[0]");
  // Identities over every dim.
  CHECK(e.sum().item<double>() == 0);
  CHECK(e.prod(std::nullopt, false).item<double>() == 1);
  CHECK(std::isnan(e.mean(std::nullopt, false).item<double>()));
}

TEST_CASE("0-dim inputs: no dim, dim 0 and every dim give the element") {
  const Tensor x = tensor(std::vector<double>{-2.5}, {}, DType::Float32);
  const V none, zero{0}, last{-1};
  for (OptionalIntArrayRef dims : {OptionalIntArrayRef(std::nullopt), OptionalIntArrayRef(none),
                                   OptionalIntArrayRef(zero), OptionalIntArrayRef(last)}) {
    CHECK(x.sum(dims, false).item<double>() == -2.5);
    CHECK(x.amax(dims).item<double>() == -2.5);
    CHECK(x.norm(1, dims).item<double>() == 2.5);
    CHECK(x.sum(dims, true).dim() == 0);
  }
}

TEST_CASE("dim lists are checked whether or not they are empty") {
  const Tensor x = zeros({2, 3});
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.sum({2}, false), "sum", "2");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.amax({1, -1}), "amax", "multiple");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.var({-3}), "var", "-3");
}

TEST_CASE("gradients of reductions over no dim, every dim and a computed empty list") {
  manual_seed(5);
  const Tensor x = randn({2, 3}, DType::Float64).requires_grad_();
  x.sum({}, false).mul(x).sum().backward();  // d/dx sum(x * x) = 2x
  CHECK(x.grad().allclose(x.detach() * 2));
  x.set_grad(Tensor());
  x.amax({}).sum().backward();
  CHECK(x.grad().equal(ones({2, 3}, DType::Float64)));
  x.set_grad(Tensor());
  x.norm(2, {}).sum().backward();
  CHECK(x.grad().equal(x.detach().sign()));
  x.set_grad(Tensor());
  x.prod({}, true).sum().backward();
  CHECK(x.grad().equal(ones({2, 3}, DType::Float64)));
  x.set_grad(Tensor());
  x.mean(std::nullopt, false).backward();
  CHECK(x.grad().allclose(full({2, 3}, 1.0 / 6, DType::Float64)));
  x.set_grad(Tensor());
  // Broadcasting with nothing to sum back: the gradient of a same-shape add.
  (x + ones({2, 3}, DType::Float64)).sum().backward();
  CHECK(x.grad().equal(ones({2, 3}, DType::Float64)));
}
