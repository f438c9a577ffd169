// GPU tests of the unary ops where CUDA must give the CPU's exact bits: the ops that keep the
// dtype (neg and abs wrap for the most negative integer, round is half to even, sign and relu
// keep NaN), nan_to_num's defaults and replacements per dtype, the predicates on every dtype;
// and gelu's two forms and softplus's beta and threshold against the CPU within the op table's
// tolerances. tests/gpu/test_cuda_op_table.cpp compares every op with its reference.
#include <limits>
#include <string>
#include <vector>

#include "anatomy/testing/op_table.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_numbers;
using gpu_test::same_values;

namespace {

using D = std::vector<double>;
using gpu_test::kFloatingDtypes;

const double kInf = std::numeric_limits<double>::infinity(), kNaN = std::numeric_limits<double>::quiet_NaN();
Tensor values(const D& v, DType d) { return tensor(v, {static_cast<int64_t>(v.size())}, DType::Float64).to(d); }
const D kSpecial = {kNaN, kInf, -kInf, 0.0, -0.0, 0.5, 1.5, 2.5, -2.5, -0.5, 1e30, -7.25, 65504, 3.0};

}  // namespace

TEST_CASE("cuda unary: the ops that keep the dtype give the CPU's bits") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kFloatingDtypes) {
    CAPTURE(name(d));
    const Tensor x = values(kSpecial, d), g = x.to(kCuda);
    CHECK(same_numbers(neg(g), neg(x)));
    CHECK(same_numbers(abs(g), abs(x)));
    CHECK(same_numbers(sign(g), sign(x)));
    CHECK(same_numbers(floor(g), floor(x)));
    CHECK(same_numbers(ceil(g), ceil(x)));
    CHECK(same_numbers(round(g), round(x)));  // half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2
    CHECK(same_numbers(trunc(g), trunc(x)));
    CHECK(same_numbers(relu(g), relu(x)));
  }
  for (DType d : {DType::UInt8, DType::Int8, DType::Int32, DType::Int64}) {
    CAPTURE(name(d));
    const D v = d == DType::UInt8   ? D{0, 1, 7, 128, 255}
                : d == DType::Int8  ? D{-128, -1, 0, 5, 127}
                : d == DType::Int32 ? D{-2147483648.0, -1, 0, 5, 2147483647.0}
                                    : D{-9223372036854775808.0, -1, 0, 5, 1e18};
    const Tensor x = values(v, d), g = x.to(kCuda);
    CHECK(same_values(neg(g), neg(x)));
    CHECK(same_values(abs(g), abs(x)));
    CHECK(same_values(sign(g), sign(x)));
    CHECK(same_values(relu(g), relu(x)));
    CHECK(same_values(bitwise_not(g), bitwise_not(x)));
    CHECK(same_values(round(g), x));
  }
  const Tensor b = tensor({true, false, true});
  CHECK(same_values(bitwise_not(b.to(kCuda)), bitwise_not(b)));
  CHECK(same_values(sign(b.to(kCuda)), b));
}

TEST_CASE("cuda unary: nan_to_num's defaults and replacements per dtype") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kFloatingDtypes) {
    CAPTURE(name(d));
    const Tensor x = values(kSpecial, d), g = x.to(kCuda);
    CHECK(same_values(nan_to_num(g), nan_to_num(x)));  // +-inf -> the dtype's largest and lowest
    CHECK(same_values(nan_to_num(g, 1.5, 100.0, -1e6), nan_to_num(x, 1.5, 100.0, -1e6)));
    Tensor inplace = g.clone();
    nan_to_num_(inplace, std::nullopt, 7.0, std::nullopt);
    CHECK(same_values(inplace, nan_to_num(x, std::nullopt, 7.0, std::nullopt)));
  }
  const Tensor i = values({1, -2, 3}, DType::Int32);
  CHECK(same_values(nan_to_num(i.to(kCuda)), i));
}

TEST_CASE("cuda unary: isnan, isinf, isfinite and logical_not on every dtype") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor x = is_floating(d) ? values(kSpecial, d) : gpu_test::sample({13}, d);
    const Tensor g = x.to(kCuda);
    CHECK(same_values(isnan(g), isnan(x)));
    CHECK(same_values(isinf(g), isinf(x)));
    CHECK(same_values(isfinite(g), isfinite(x)));
    CHECK(same_values(logical_not(g), logical_not(x)));
  }
}

TEST_CASE("cuda unary: gelu's two forms and softplus's beta and threshold follow the CPU") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kFloatingDtypes) {
    CAPTURE(name(d));
    const Tensor x = tensor(D{-6, -2.5, -1, -0.1, 0, 0.1, 1, 2.5, 6, 15, 30}, {11}, DType::Float64).to(d);
    const Tensor g = x.to(kCuda);
    const testing::Tolerance tol = testing::default_tolerance(d);
    auto close = [&](const Tensor& got, const Tensor& want) {
      return testing::compare(got, testing::to_ref(want), tol);
    };
    CHECK(close(gelu(g, "none"), gelu(x, "none")) == "");
    CHECK(close(gelu(g, "tanh"), gelu(x, "tanh")) == "");
    CHECK(close(softplus(g, 2.0, 10.0), softplus(x, 2.0, 10.0)) == "");  // beta 2: x > 5 returns x
    CHECK(close(softplus(g, 0.5, 1.0), softplus(x, 0.5, 1.0)) == "");
  }
}
