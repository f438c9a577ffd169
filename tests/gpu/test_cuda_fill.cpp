// GPU tests of fill_ on CUDA: dense and strided views, every dtype, against the same fills done
// on the CPU.
#include <cmath>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;

namespace {

// Applies `view` to a CPU and a CUDA copy of the same data, fills both views with `value`, and
// checks that the whole base tensors (filled and untouched parts) agree.
template <typename ViewFn>
void check_fill(IntArrayRef sizes, DType dtype, const Scalar& value, ViewFn view) {
  Tensor cpu = gpu_test::sample(sizes, dtype);
  Tensor gpu = cpu.to(kCuda);
  view(cpu).fill_(value);
  uint32_t before = gpu.version();
  view(gpu).fill_(value);
  CHECK(gpu.version() == before + 1);
  CHECK(same_values(gpu, cpu));
}

}  // namespace

TEST_CASE("cuda fill_: contiguous and strided views, every dtype") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    Scalar v = d == DType::Bool ? Scalar(true) : Scalar(5);
    check_fill({4, 6}, d, v, [](const Tensor& t) { return t; });
    check_fill({4, 6}, d, v, [](const Tensor& t) { return t.t(); });
    check_fill({4, 6}, d, v, [](const Tensor& t) { return t.slice(1, 1, 6, 2); });
    check_fill({4, 6}, d, v, [](const Tensor& t) { return t.slice(0, 1, 3).slice(1, 2, 5); });
    check_fill({5, 5}, d, v, [](const Tensor& t) { return t.diagonal(); });
    check_fill({3, 4, 5}, d, v, [](const Tensor& t) { return t.permute({2, 0, 1}).select(1, 1); });
    check_fill({2, 3, 4, 5}, d, v, [](const Tensor& t) { return t.slice(3, 0, 5, 3).transpose(0, 2); });
  }
}

TEST_CASE("cuda fill_: float values round as on the CPU") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64, DType::Int32}) {
    CAPTURE(name(d));
    check_fill({7, 3}, d, 0.1, [](const Tensor& t) { return t.slice(0, 0, 7, 2); });
    if (is_floating(d)) check_fill({3}, d, -INFINITY, [](const Tensor& t) { return t; });
  }
}

TEST_CASE("cuda fill_: large tensors and many dims") {
  ANATOMY_REQUIRE_GPU();
  // More elements than one grid covers, so the grid-stride loop runs.
  Tensor big = empty({int64_t{1} << 25}, TensorOptions().dtype(DType::UInt8).device(kCuda));
  big.fill_(3);
  CHECK(big[0].item<int64_t>() == 3);
  CHECK(big[(int64_t{1} << 25) - 1].item<int64_t>() == 3);
  CHECK(big.slice(0, 0, std::nullopt, 4097).cpu().contiguous().data_ptr<uint8_t>()[100] == 3);
  // All dims reversed after a slice: nothing is dense and no two dims merge, so the kernel walks
  // 25 dims, its limit; one more is a NotImplementedError rather than a wrong answer.
  std::vector<int64_t> sizes(24, 2);
  sizes.push_back(3);
  check_fill(sizes, DType::UInt8, 2, [](const Tensor& t) { return t.slice(24, 0, 2).T(); });
  sizes.insert(sizes.begin(), 2);
  Tensor deep = zeros(sizes, TensorOptions().dtype(DType::UInt8).device(kCuda));
  CHECK_THROWS_WITH_AS(deep.slice(25, 0, 2).T().fill_(1), doctest::Contains("at most 25 dims"), NotImplementedError);
}

TEST_CASE("cuda fill_: zero-size and expanded tensors") {
  ANATOMY_REQUIRE_GPU();
  Tensor none = zeros({0, 3}, kCuda);
  none.fill_(1);
  CHECK(none.numel() == 0);
  Tensor expanded = zeros({3}, kCuda).unsqueeze(0).expand({4, 3});
  CHECK_THROWS_AS(expanded.fill_(1), ValueError);
}
