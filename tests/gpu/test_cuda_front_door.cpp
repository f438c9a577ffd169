// GPU tests of the functions over the operators that a libtorch user reaches for first (the CPU
// side is tests/core/test_front_door.cpp): in-place arithmetic with a number and compound
// assignment on a CUDA tensor, isclose / allclose / equal against the CPU's answers, and
// randperm on the device (a permutation, repeated by the seed, never touching the host's data).
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::values_of;

TEST_CASE("cuda front door: x.mul_(10), x += y and div with a number and a rounding mode") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = tensor({1.0, 2.0, 3.0}).to(kCuda);
  x.mul_(10).add_(1);
  x += tensor({1.0, 1.0, 1.0}).to(kCuda);
  x /= 2;
  CHECK(x.device() == kCuda);
  CHECK(values_of(x) == std::vector<double>{6, 11, 16});
  Tensor i = tensor({-7, 7}, DType::Int64).to(kCuda);
  CHECK(values_of(i.div(2, "floor")) == std::vector<double>{-4, 3});
}

TEST_CASE("cuda front door: isclose, allclose and equal give the CPU's answers") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(11);
  const Tensor a = randn({64, 33}), b = a + randn({64, 33}) * 1e-6;
  const Tensor c = a.t();  // transposed operands too
  for (auto [rtol, atol] : {std::pair{1e-5, 1e-8}, std::pair{0.0, 1e-7}, std::pair{0.0, 0.0}}) {
    CHECK(values_of(isclose(a.to(kCuda), b.to(kCuda), rtol, atol)) == values_of(isclose(a, b, rtol, atol)));
    CHECK(values_of(isclose(c.to(kCuda), c.to(kCuda).contiguous(), rtol, atol)) ==
          values_of(isclose(c, c, rtol, atol)));
  }
  CHECK(allclose(a.to(kCuda), b.to(kCuda), 1e-4, 1e-5));
  CHECK(equal(a.to(kCuda), a.to(kCuda).clone()));
  CHECK_FALSE(equal(a.to(kCuda), b.to(kCuda)));
}

TEST_CASE("cuda front door: randperm on the device") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(5);
  const Tensor p = randperm(5000, TensorOptions().device(kCuda));
  CHECK(p.device() == kCuda);
  CHECK(p.dtype() == DType::Int64);
  std::vector<double> want(5000);
  for (int k = 0; k < 5000; ++k) want[k] = k;
  CHECK(values_of(std::get<0>(p.sort())) == want);
  manual_seed(5);
  CHECK(values_of(randperm(5000, TensorOptions().device(kCuda))) == values_of(p));
  CHECK(randperm(0, TensorOptions().device(kCuda)).numel() == 0);
}
