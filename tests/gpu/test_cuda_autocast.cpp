// Autocast on CUDA with fp16, over element-wise operators: the fp32 list (exp, log, pow), the
// promote list (where, lerp, atan2), operators on no list, gradients through the casts, and CPU
// tensors left alone by a CUDA scope.
#include "gpu_test_util.h"

using namespace anatomy;
using anatomy::gpu_test::kCuda;
using autocast::AutocastGuard;

TEST_CASE("cuda autocast: fp16 inputs of exp, log and pow are computed in fp32") {
  ANATOMY_REQUIRE_GPU();
  Tensor h = full({4}, 2.0, TensorOptions().dtype(DType::Float16).device(kCuda));
  AutocastGuard amp(DeviceType::CUDA, DType::Float16);
  CHECK(h.exp().dtype() == DType::Float32);
  CHECK(h.log().dtype() == DType::Float32);
  CHECK(pow(h, 3.0).dtype() == DType::Float32);
  CHECK(pow(h, 3.0).select(0, 0).item<double>() == 8.0);
  CHECK(h.tanh().dtype() == DType::Float16);  // on no list
  CHECK((h + h).dtype() == DType::Float16);
}

TEST_CASE("cuda autocast: where, lerp and atan2 cast to the widest floating input") {
  ANATOMY_REQUIRE_GPU();
  Tensor h = ones({3}, TensorOptions().dtype(DType::Float16).device(kCuda));
  Tensor f = ones({3}, TensorOptions().device(kCuda));
  Tensor mask = ones({3}, TensorOptions().dtype(DType::Bool).device(kCuda));
  AutocastGuard amp(DeviceType::CUDA, DType::Float16);
  CHECK(where(mask, h, f).dtype() == DType::Float32);
  CHECK(where(mask, h, h).dtype() == DType::Float16);
  CHECK(lerp(h, f, 0.5).dtype() == DType::Float32);
  CHECK(atan2(h, f).dtype() == DType::Float32);
}

TEST_CASE("cuda autocast: gradients return through the casts in the leaf's dtype") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = full({4}, 0.5, TensorOptions().dtype(DType::Float16).device(kCuda)).requires_grad_();
  Tensor y;
  {
    AutocastGuard amp(DeviceType::CUDA, DType::Float16);
    y = x.exp();
  }
  CHECK(y.dtype() == DType::Float32);
  y.backward(ones_like(y));
  REQUIRE(x.grad().defined());
  CHECK(x.grad().dtype() == DType::Float16);
  CHECK(x.grad().select(0, 0).item<double>() == doctest::Approx(std::exp(0.5)).epsilon(1e-3));
}

TEST_CASE("cuda autocast: a CUDA scope leaves CPU tensors alone, and a CPU scope CUDA tensors") {
  ANATOMY_REQUIRE_GPU();
  Tensor hc = ones({2}, DType::BFloat16);
  Tensor hg = ones({2}, TensorOptions().dtype(DType::Float16).device(kCuda));
  {
    AutocastGuard amp(DeviceType::CUDA, DType::Float16);
    CHECK(hc.exp().dtype() == DType::BFloat16);
    CHECK(hg.exp().dtype() == DType::Float32);
  }
  {
    AutocastGuard amp(DeviceType::CPU, DType::BFloat16);
    CHECK(hg.exp().dtype() == DType::Float16);
    CHECK(hc.exp().dtype() == DType::Float32);
  }
}
