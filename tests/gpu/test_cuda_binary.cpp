// GPU tests of the binary ops where CUDA's rules need more than the op table's samples: integer
// division by zero (Note [Integer division by zero on CUDA], backends/cuda/elementwise/elementwise_math.cuh),
// negative integer powers, shifts out of range, the extreme integers, and out= tensors of
// another dtype. tests/gpu/test_cuda_op_table.cpp compares every op with its reference.
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::sample;
using gpu_test::values_of;

namespace {

using D = std::vector<double>;
const std::vector<DType> kIntegers = {DType::UInt8, DType::Int8, DType::Int32, DType::Int64};

// A 1-d CPU tensor of dtype d with these (exactly representable) values.
Tensor values(const D& v, DType d) { return tensor(v, {static_cast<int64_t>(v.size())}, DType::Float64).to(d); }
double lowest(DType d) {
  switch (d) {
    case DType::Int8:
      return -128;
    case DType::Int32:
      return -2147483648.0;
    default:
      return -9223372036854775808.0;
  }
}

}  // namespace

TEST_CASE("cuda binary: an integer zero divisor on the device gives all ones, and nothing raises") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kIntegers) {
    CAPTURE(name(d));
    const double ones = d == DType::UInt8 ? 255 : -1;
    const Tensor a = values({7, 5, 9, 100}, d).to(kCuda), b = values({2, 0, 3, 0}, d).to(kCuda);
    CHECK(values_of(div(a, b, "trunc")) == D{3, ones, 3, ones});
    CHECK(values_of(div(a, b, "floor")) == D{3, ones, 3, ones});
    CHECK(values_of(remainder(a, b)) == D{1, ones, 0, ones});
    CHECK(values_of(fmod(a, b)) == D{1, ones, 0, ones});
    Tensor inplace = a.clone();
    inplace.remainder_(b);
    CHECK(values_of(inplace) == D{1, ones, 0, ones});
  }
}

TEST_CASE("cuda binary: a zero CPU scalar divisor raises as on the CPU and changes nothing") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kIntegers) {
    CAPTURE(name(d));
    const Tensor cpu = values({7, 5, 9, 100}, d);
    const Tensor gpu = cpu.to(kCuda);
    CHECK_THROWS_AS(remainder(gpu, Scalar(0)), ValueError);
    CHECK_THROWS_AS(fmod(gpu, full({}, 0, d)), ValueError);
    CHECK_THROWS_AS(div(gpu, full({}, 0, d), "floor"), ValueError);
    Tensor target = gpu.clone();
    CHECK_THROWS_AS(target.fmod_(Scalar(0)), ValueError);
    CHECK(same_values(target, cpu));
    // Nonzero scalars divide.
    CHECK(same_values(remainder(gpu, Scalar(3)), remainder(cpu, Scalar(3))));
    CHECK(same_values(div(gpu, full({}, 4, d), "trunc"), div(cpu, full({}, 4, d), "trunc")));
  }
}

TEST_CASE("cuda binary: integer powers with negative exponents") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Int8, DType::Int32, DType::Int64}) {
    CAPTURE(name(d));
    // In device memory: PyTorch's values (1 for base 1, +-1 for base -1, else 0).
    const Tensor base = values({1, -1, -1, 2, -2, 3}, d).to(kCuda),
                 exponent = values({-1, -3, -2, -2, -1, 2}, d).to(kCuda);
    CHECK(values_of(pow(base, exponent)) == D{1, -1, 1, 0, 0, 9});
    // A CPU scalar: raises, as on the CPU.
    CHECK_THROWS_AS(pow(base, Scalar(-2)), ValueError);
    CHECK(values_of(pow(base, Scalar(2))) == D{1, 1, 1, 4, 4, 9});
  }
}

TEST_CASE("cuda binary: shifts by negative amounts and by the width or more match the CPU") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kIntegers) {
    CAPTURE(name(d));
    const bool is_unsigned = d == DType::UInt8;
    const Tensor a =
        values(is_unsigned ? D{1, 3, 200, 255, 7, 128, 64, 9, 1, 100} : D{1, -3, 100, -1, 7, -128, 64, -9, 1, -100}, d);
    const Tensor s =
        values(is_unsigned ? D{0, 1, 7, 8, 9, 100, 255, 3, 6, 200} : D{-1, 0, 1, 7, 8, 31, 32, 63, 64, 100}, d);
    CHECK(same_values(bitwise_left_shift(a.to(kCuda), s.to(kCuda)), bitwise_left_shift(a, s)));
    CHECK(same_values(bitwise_right_shift(a.to(kCuda), s.to(kCuda)), bitwise_right_shift(a, s)));
    CHECK(same_values(bitwise_left_shift(a.to(kCuda), Scalar(3)), bitwise_left_shift(a, Scalar(3))));
  }
}

TEST_CASE("cuda binary: the most negative integer divided by -1 and other edges match the CPU") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Int8, DType::Int32, DType::Int64}) {
    CAPTURE(name(d));
    const double low = lowest(d);
    const Tensor a = values({low, low, 7, -7, -7, low}, d), b = values({-1, 1, -2, 2, -2, 3}, d);
    const Tensor ga = a.to(kCuda), gb = b.to(kCuda);
    CHECK(same_values(div(ga, gb, "trunc"), div(a, b, "trunc")));
    CHECK(same_values(div(ga, gb, "floor"), div(a, b, "floor")));
    CHECK(same_values(remainder(ga, gb), remainder(a, b)));
    CHECK(same_values(fmod(ga, gb), fmod(a, b)));
    CHECK(same_values(ga * gb, a * b));  // wraps
    CHECK(same_values(ga - gb, a - b));
    CHECK(same_values(add(ga, gb, 3), add(a, b, 3)));
  }
}

TEST_CASE("cuda binary: out= tensors of another dtype get the converted result") {
  ANATOMY_REQUIRE_GPU();
  const Tensor a = sample({5, 7}, DType::Float32), b = sample({5, 7}, DType::Float32);
  const Tensor ga = a.to(kCuda), gb = b.to(kCuda);
  Tensor out = empty({5, 7}, TensorOptions().dtype(DType::Float32).device(kCuda));
  lt_out(out, ga, gb);  // a bool result into fp32
  CHECK(same_values(out, lt(a, b).to(DType::Float32)));
  Tensor wide = empty({5, 7}, TensorOptions().dtype(DType::Float64).device(kCuda));
  maximum_out(wide, ga, gb);  // fp32 computed, fp64 stored
  CHECK(same_values(wide, maximum(a, b).to(DType::Float64)));
  // Mixed dtypes: the int32 operand is converted on the device before the fp32 kernel runs
  // (a product, which both devices round the same way).
  const Tensor i = sample({5, 7}, DType::Int32);
  CHECK(same_values(ga * i.to(kCuda), a * i));
}
