// GPU tests of reading CUDA values on the host: item() and printing.
#include <sstream>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

TEST_CASE("cuda item: every dtype, and elements of strided views") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    Tensor cpu = gpu_test::sample({4, 3}, d);
    Tensor gpu = cpu.to(kCuda);
    CHECK(gpu[2][1].item() == cpu[2][1].item());
    CHECK(gpu.t()[2][3].item() == cpu.t()[2][3].item());
    CHECK(gpu.slice(0, 1, 4, 2)[1][0].item() == cpu.slice(0, 1, 4, 2)[1][0].item());
  }
  CHECK(full({}, 3.5, kCuda).item<double>() == 3.5);
  CHECK(full({1, 1}, -7, TensorOptions().dtype(DType::Int8).device(kCuda)).item<int64_t>() == -7);
  CHECK(full({1}, true, kCuda).item().is_bool());
  CHECK(full({}, int64_t{1} << 62, kCuda).item<int64_t>() == int64_t{1} << 62);
  CHECK_THROWS_AS(zeros({2}, kCuda).item(), ValueError);
}

TEST_CASE("cuda print: values come from the device, the device is named") {
  ANATOMY_REQUIRE_GPU();
  CHECK(to_string(zeros({2, 2}, kCuda)) == "tensor([[0., 0.],\n        [0., 0.]], device='cuda:0')");
  CHECK(to_string(full({3}, 2, TensorOptions().dtype(DType::Float16).device(kCuda))) ==
        "tensor([2., 2., 2.], device='cuda:0', dtype=fp16)");
  CHECK(to_string(ones({2, 3}, TensorOptions().dtype(DType::Int64).device(kCuda)).t()) ==
        "tensor([[1, 1],\n        [1, 1],\n        [1, 1]], device='cuda:0')");
  CHECK(to_string(empty({0}, kCuda)) == "tensor([], device='cuda:0')");
  Tensor big = zeros({2000}, kCuda);
  CHECK(to_string(big) == to_string(zeros({2000})).insert(to_string(zeros({2000})).size() - 1, ", device='cuda:0'"));
  std::ostringstream os;
  os << ones({1}, kCuda);
  CHECK(os.str() == "tensor([1.], device='cuda:0')");
}
