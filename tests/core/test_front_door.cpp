// What a libtorch user types first: in-place arithmetic with a number (x.mul_(10)), compound
// assignment (x += y), div with a number and a rounding mode, rsub, isclose / allclose / equal,
// and randperm. Each is checked against a plain reference, with broadcast, transposed, empty and
// mixed-dtype operands where they apply, and bad arguments end in typed errors that change
// nothing.
#include <cmath>
#include <limits>
#include <random>

#include "test_util.h"

using namespace anatomy;
using anatomy_test::D;
using anatomy_test::values;

TEST_CASE("in-place arithmetic with a number, and compound assignment") {
  Tensor x = tensor({1.0, 2.0, 3.0});
  CHECK(&x.mul_(10) == &x);
  CHECK(values(x) == D{10, 20, 30});
  x.add_(1).sub_(2, 3).div_(4);  // ((x + 1) - 2 * 3) / 4
  CHECK(values(x) == D{1.25, 3.75, 6.25});
  const int64_t version = x.version();
  x += 1;
  x -= tensor({0.25, 0.75, 0.25});
  x *= 2;
  x /= tensor({1.0, 2.0, 4.0});
  CHECK(values(x) == D{4.0, 4.0, 3.5});
  CHECK(x.version() == version + 4);
  // A transposed view is written through; a broadcast operand is read as broadcast.
  Tensor m = zeros({3, 2});
  Tensor mt = m.t();
  mt += tensor({1.0, 2.0, 3.0});
  CHECK(values(m) == D{1, 1, 2, 2, 3, 3});
  // Integer tensors keep their dtype with an integer number; true division cannot write into
  // them, and a failed in-place call changes nothing.
  Tensor i = tensor({7, -7}, DType::Int64);
  i *= 3;
  CHECK(i.dtype() == DType::Int64);
  CHECK(values(i) == D{21, -21});
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.div_(2), "div", "int64");
  EXPECT_ERROR_UNCHANGED(i, TypeError, i += 0.5, "add", "int64");
  Tensor empty_t = empty({0, 3});
  empty_t += 1;
  CHECK(empty_t.numel() == 0);
}

TEST_CASE("div with a number and a rounding mode, functional and in place") {
  Tensor i = tensor({-7, 7, -8}, DType::Int64);
  CHECK(values(i.div(2, "floor")) == D{-4, 3, -4});
  CHECK(values(i.div(2, "trunc")) == D{-3, 3, -4});
  CHECK(i.div(2, "floor").dtype() == DType::Int64);
  CHECK(values(div(i, 2.0, std::nullopt)) == D{-3.5, 3.5, -4});
  i.div_(-2, "floor");
  CHECK(values(i) == D{3, -4, 4});
  EXPECT_ERROR_UNCHANGED(i, ValueError, i.div_(0, "trunc"), "division by zero");
  EXPECT_ERROR(ValueError, i.div(2, "round"), "rounding_mode");
}

TEST_CASE("rsub: other - alpha * self") {
  Tensor x = tensor({1.0, 2.0}), y = tensor({10.0, 20.0});
  CHECK(values(rsub(x, y)) == D{9, 18});
  CHECK(values(rsub(x, y, 2)) == D{8, 16});
  CHECK(values(rsub(x, 1.5, 2)) == D{-0.5, -2.5});
  // A number keeps the tensor's dtype category: an integer tensor and an integer number stay int64.
  CHECK(rsub(tensor({1, 2}, DType::Int64), 5).dtype() == DType::Int64);
  CHECK(values(rsub(tensor({1, 2}, DType::Int64), 5)) == D{4, 3});
  CHECK(values(rsub(tensor({1.0, 2.0}), tensor({{1.0}, {2.0}}))) == D{0, -1, 1, 0});  // broadcast
}

namespace {

// torch.isclose's rule, element by element in T (the tensors' dtype, so roundings agree).
template <typename T>
bool reference_close(double a_in, double b_in, double rtol, double atol, bool equal_nan) {
  const T a = static_cast<T>(a_in), b = static_cast<T>(b_in);
  if (a == b) return true;
  if (std::isnan(a) && std::isnan(b)) return equal_nan;
  const T actual = std::abs(a - b);
  return std::isfinite(actual) && actual <= std::abs(b * static_cast<T>(rtol)) + static_cast<T>(atol);
}

}  // namespace

TEST_CASE("isclose matches the rule on random, broadcast, transposed, empty and integer operands") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-2.0, 2.0), noise(-1e-4, 1e-4);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> av, bv;
  for (int k = 0; k < 60; ++k) {
    const double a = u(rng);
    av.push_back(a);
    bv.push_back(k % 3 == 0 ? a + noise(rng) : (k % 3 == 1 ? a * (1 + 1e-6) : u(rng)));
  }
  for (double special : {inf, -inf, nan, 0.0}) {
    av.push_back(special);
    bv.push_back(special);
    av.push_back(special);
    bv.push_back(1.0);
  }
  const int64_t n = static_cast<int64_t>(av.size());
  for (DType t : {DType::Float64, DType::Float32}) {
    for (bool equal_nan : {false, true}) {
      for (auto [rtol, atol] : {std::pair{1e-5, 1e-8}, std::pair{1e-3, 0.0}, std::pair{0.0, 0.0}}) {
        INFO("dtype " << name(t) << " equal_nan " << equal_nan << " rtol " << rtol << " atol " << atol);
        const Tensor a = tensor(av, {n}, t), b = tensor(bv, {n}, t);
        const D got = values(isclose(a, b, rtol, atol, equal_nan));
        const D ad = values(a), bd = values(b);
        int wrong = 0;
        for (int64_t k = 0; k < n; ++k) {
          const bool want = t == DType::Float64 ? reference_close<double>(ad[k], bd[k], rtol, atol, equal_nan)
                                                : reference_close<float>(ad[k], bd[k], rtol, atol, equal_nan);
          wrong += got[k] != (want ? 1 : 0);
        }
        CHECK(wrong == 0);
      }
    }
  }
  // Broadcast and transposed operands.
  Tensor m = tensor({{1.0, 2.0}, {3.0, 4.0}});
  CHECK(values(isclose(m.t(), tensor({1.0, 3.0}))) == D{1, 1, 0, 0});
  CHECK(isclose(m, tensor({1.0, 2.0})).sizes() == IntArrayRef{2, 2});
  CHECK(isclose(empty({0, 2}), empty({0, 2})).numel() == 0);
  // Integers: the error in fp64, so extreme values cannot wrap.
  const int64_t big = std::numeric_limits<int64_t>::max();
  Tensor ints = tensor(std::vector<int64_t>{big, -big, 100}, {3}, DType::Int64);
  Tensor other = tensor(std::vector<int64_t>{-big, big, 101}, {3}, DType::Int64);
  CHECK(values(isclose(ints, other, 0.0, 1.0)) == D{0, 0, 1});
  CHECK(values(isclose(tensor({1, 0}, DType::Bool), tensor({1, 1}, DType::Bool))) == D{1, 0});
  EXPECT_ERROR(TypeError, isclose(m, m.to(DType::Float64)), "isclose", "fp32", "fp64");
  EXPECT_ERROR(ValueError, isclose(m, m, -1.0), "rtol");
  EXPECT_ERROR(ValueError, isclose(m, m, 1e-5, nan), "atol");
  EXPECT_ERROR(DeviceError, isclose(m, empty({2, 2}, Device("meta"))), "isclose", "cpu", "meta");
}

TEST_CASE("allclose and equal") {
  Tensor a = tensor({1.0, 2.0, 3.0});
  CHECK(allclose(a, a + 1e-9));
  CHECK_FALSE(allclose(a, a + 1e-3));
  CHECK(a.allclose(a + 1e-3, 1e-2));
  CHECK(allclose(empty({0}), empty({0})));
  CHECK(equal(a, a.clone()));
  CHECK(a.equal(tensor({1, 2, 3}, DType::Int64)));  // compared after promotion
  CHECK_FALSE(equal(a, tensor({1.0, 2.0})));        // other sizes
  CHECK_FALSE(equal(a, a.unsqueeze(0)));
  Tensor with_nan = tensor({1.0, std::nan("")});
  CHECK_FALSE(equal(with_nan, with_nan));
  CHECK(allclose(with_nan, with_nan, 1e-5, 1e-8, true));
  EXPECT_ERROR(DeviceError, equal(a, empty({3}, Device("meta"))), "equal", "cpu", "meta");
  EXPECT_ERROR(DeviceError, allclose(a, empty({3}, Device("meta"))), "allclose", "meta");
}

TEST_CASE("randperm: a permutation from the generator, checked sizes and dtypes") {
  manual_seed(3);
  const Tensor p = randperm(1000);
  CHECK(p.dtype() == DType::Int64);
  CHECK(p.sizes() == IntArrayRef{1000});
  D sorted = values(std::get<0>(p.sort()));
  D want(1000);
  for (int k = 0; k < 1000; ++k) want[k] = k;
  CHECK(sorted == want);
  CHECK(values(p) != want);  // 1000! orders; the identity would mean no shuffling
  manual_seed(3);
  CHECK(values(randperm(1000)) == values(p));
  CHECK(randperm(0).numel() == 0);
  const Tensor f = randperm(5, DType::Float32);
  CHECK(f.dtype() == DType::Float32);
  CHECK(values(std::get<0>(f.sort())) == D{0, 1, 2, 3, 4});
  CHECK(randperm(256, DType::BFloat16).numel() == 256);
  EXPECT_ERROR(ValueError, randperm(-1), "randperm", "-1");
  EXPECT_ERROR(ValueError, randperm(129, DType::Int8), "randperm", "129", "int8");
  EXPECT_ERROR(ValueError, randperm(258, DType::BFloat16), "randperm", "258");
  EXPECT_ERROR(TypeError, randperm(3, DType::Bool), "randperm", "bool");
  CHECK(randperm(4, TensorOptions().dtype(DType::Float32).requires_grad(true)).requires_grad());
}
