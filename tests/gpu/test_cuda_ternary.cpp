// GPU tests of where, lerp and clamp with CPU scalars among their operands (each passed to the
// kernel by value, Note [CPU scalars in device plans]) and with broadcast conditions and bounds;
// tests/gpu/test_cuda_op_table.cpp compares them with their references on the standard samples.
#include <limits>
#include <optional>
#include <vector>

#include "anatomy/testing/op_table.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_numbers;
using gpu_test::same_values;
using gpu_test::sample;

TEST_CASE("cuda ternary: where with Scalars and broadcast conditions gives the CPU's values") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float32, DType::Float16, DType::Int64, DType::Bool}) {
    CAPTURE(name(d));
    const Tensor x = sample({6, 5}, d), y = sample({6, 5}, d);
    const Tensor condition = sample({6, 1}, DType::Bool);
    const Tensor gx = x.to(kCuda), gy = y.to(kCuda), gc = condition.to(kCuda);
    CHECK(same_values(where(gc, gx, gy), where(condition, x, y)));
    CHECK(same_values(where(gc, gx, Scalar(2)), where(condition, x, Scalar(2))));
    CHECK(same_values(where(gc, Scalar(1), gy), where(condition, Scalar(1), y)));
    CHECK(same_values(where(gc.t(), gx.t(), gy.t()), where(condition.t(), x.t(), y.t())));
  }
}

TEST_CASE("cuda ternary: clamp with tensor bounds, lerp with a Scalar weight") {
  ANATOMY_REQUIRE_GPU();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType d : {DType::Float32, DType::BFloat16, DType::Float64}) {
    CAPTURE(name(d));
    const Tensor x = tensor(std::vector<double>{-3.0, -0.5, 0.25, 2.0, nan, 7.0}, {6}, DType::Float64).to(d);
    // A CUDA max bound (min > max at the end) and a CPU 0-dim min bound.
    const Tensor hi = tensor(std::vector<double>{1.0, 1.0, nan, 1.5, 1.0, -2.0}, {6}, DType::Float64).to(d);
    const Tensor lo = full({}, -1.0, d);
    CHECK(same_numbers(clamp(x.to(kCuda), std::optional<Tensor>(lo), std::optional<Tensor>(hi.to(kCuda))),
                       clamp(x, std::optional<Tensor>(lo), std::optional<Tensor>(hi))));
    // lerp rounds twice; CUDA may fuse a multiply and an add where the CPU does not, so it is
    // compared within the op table's tolerance rather than bit for bit.
    const Tensor end = sample({6}, d);
    Tensor target = x.to(kCuda);
    lerp_(target, end.to(kCuda), 0.3);
    CHECK(testing::compare(target, testing::to_ref(lerp(x, end, 0.3)), testing::default_tolerance(d)) == "");
  }
  // Integers clamp exactly, both bounds tensors.
  const Tensor i = sample({4, 6}, DType::Int32), lo = sample({4, 1}, DType::Int32), hi = sample({6}, DType::Int32);
  CHECK(same_values(clamp(i.to(kCuda), std::optional<Tensor>(lo.to(kCuda)), std::optional<Tensor>(hi.to(kCuda))),
                    clamp(i, std::optional<Tensor>(lo), std::optional<Tensor>(hi))));
}
