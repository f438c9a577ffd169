// GPU tests of one_hot on CUDA against the CPU's: inferred and explicit class counts, strided,
// 0-dim and zero-size inputs; the CPU's errors at the call where the host can see them (argument
// checks, and the values when num_classes = -1, which reads the min and max with one wait);
// a bad value with an explicit num_classes raises the CPU's ValueError at the next wait and the
// device works normally after it; the explicit form waits for nothing.
#include <limits>
#include <string>
#include <vector>

#include "anatomy/cuda.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::SyncDebugScope;
using gpu_test::values_of;

namespace {

void check_one_hot(const Tensor& x, int64_t num_classes) {
  const Tensor got = one_hot(x.to(kCuda), num_classes);
  CHECK(got.is_cuda());
  CHECK(same_values(got, one_hot(x, num_classes)));
}

}  // namespace

TEST_CASE("cuda one_hot: inferred and explicit classes, every layout, against the CPU") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = randint(0, 10, {6, 7}, DType::Int64);
  for (int64_t classes : {int64_t{-1}, int64_t{10}, int64_t{13}}) {
    CAPTURE(classes);
    check_one_hot(x, classes);
    check_one_hot(x.t(), classes);
    check_one_hot(x.slice(0, 1, 6, 2).slice(1, 2, 7), classes);
    check_one_hot(x.select(1, 3), classes);
    check_one_hot(x.unsqueeze(1).expand({6, 3, 7}), classes);
  }
  check_one_hot(tensor({4}).squeeze(0), -1);  // 0-dim: [5]
  check_one_hot(tensor({4}).squeeze(0), 6);
  check_one_hot(zeros({0}, DType::Int64), 3);
  check_one_hot(zeros({0, 2}, DType::Int64), 0);
  check_one_hot(zeros({3}, DType::Int64), -1);                // one class
  const Tensor big = randint(0, 1000, {3000}, DType::Int64);  // 3 million outputs
  check_one_hot(big, -1);
  check_one_hot(big, 1024);
}

TEST_CASE("cuda one_hot: the CPU's errors at the call") {
  ANATOMY_REQUIRE_GPU();
  CHECK_THROWS_WITH_AS(one_hot(tensor({1.0, 2.0}).to(kCuda), 3), doctest::Contains("int64"), TypeError);
  CHECK_THROWS_WITH_AS(one_hot(tensor({1}).to(kCuda), -2), doctest::Contains("-2"), ValueError);
  CHECK_THROWS_WITH_AS(one_hot(zeros({0}, DType::Int64).to(kCuda), -1), doctest::Contains("empty"), ValueError);
  // num_classes = -1 reads the values on the host: the CPU's messages, at the call.
  CHECK_THROWS_WITH_AS(one_hot(tensor({1, -2, 0}).to(kCuda), -1), doctest::Contains("non-negative, got -2"),
                       ValueError);
  CHECK_THROWS_WITH_AS(one_hot(tensor({int64_t{1}, std::numeric_limits<int64_t>::max()}).to(kCuda), -1),
                       doctest::Contains("too large"), ValueError);
}

TEST_CASE("cuda one_hot: a class out of range raises ValueError at the next wait, then all is well") {
  ANATOMY_REQUIRE_GPU();
  for (const Tensor& bad : {tensor({1, 3, 0}), tensor({1, -2, 0})}) {
    const Tensor x = bad.to(kCuda);
    Tensor out;
    CHECK_NOTHROW(out = one_hot(x, 3));  // nothing waits at the call
    const std::string value = bad[1].item<int64_t>() == 3 ? "class value 3" : "class value -2";
    CHECK_THROWS_WITH_AS(out.cpu(), doctest::Contains(value.c_str()), ValueError);
    // The error was raised once; the next ops work.
    const Tensor good = randint(0, 3, {5}, DType::Int64);
    CHECK(same_values(one_hot(good.to(kCuda), 3), one_hot(good, 3)));
  }
  // num_classes 0 with values: every value is out of range.
  const Tensor out = one_hot(tensor({2, 0}).to(kCuda), 0);
  CHECK(out.sizes() == IntArrayRef({2, 0}));
  CHECK_THROWS_WITH_AS(cuda::synchronize(), doctest::Contains("num_classes 0"), ValueError);
  CHECK(values_of(one_hot(tensor({1}).to(kCuda), 2)) == std::vector<double>{0, 1});
}

TEST_CASE("cuda one_hot: inferring the classes is the one wait; explicit classes wait for nothing") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = randint(0, 5, {40}, DType::Int64).to(kCuda);
  Tensor out;
  {
    SyncDebugScope scope(cuda::SyncDebugMode::Error);
    CHECK_THROWS_WITH_AS(one_hot(x, -1), doctest::Contains("synchronizing CUDA operation"), DeviceError);
    out = one_hot(x, 5);
  }
  CHECK(same_values(out, one_hot(x.cpu(), 5)));
  CHECK(same_values(one_hot(x, -1), one_hot(x.cpu(), -1)));
}
