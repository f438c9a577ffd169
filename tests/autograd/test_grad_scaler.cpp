// GradScaler: unscaling, skipping a step on inf/NaN, backoff and growth of the scale, misuse
// errors, and a small model trained under fp16 autocast with it on the CPU.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "anatomy/anatomy.h"

using namespace anatomy;
using autocast::GradScaler;

namespace {

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  Tensor c = t.to(DType::Float64).contiguous();
  for (int64_t i = 0; i < c.numel(); ++i) v.push_back(c.data_ptr<double>()[i]);
  return v;
}

}  // namespace

TEST_CASE("GradScaler: a clean step unscales the gradients and steps, an inf skips the step and halves the scale") {
  Tensor p = tensor({1.0f, -2.0f}).requires_grad_();
  optim::SGD opt({p}, {.lr = 0.1});
  GradScaler scaler;
  CHECK(scaler.get_scale() == 65536.0);

  Tensor loss = (p * p).sum();
  Tensor scaled = scaler.scale(loss);
  CHECK(scaled.item<double>() == doctest::Approx(5.0 * 65536));
  scaled.backward();
  CHECK(values(p.grad()) == std::vector<double>{2 * 65536.0, -4 * 65536.0});
  CHECK(scaler.step(opt));
  CHECK(values(p.grad()) == std::vector<double>{2.0, -4.0});  // unscaled in place
  CHECK(values(p)[0] == doctest::Approx(0.8));
  CHECK(values(p)[1] == doctest::Approx(-1.6));
  scaler.update();
  CHECK(scaler.get_scale() == 65536.0);
  CHECK(scaler.growth_tracker() == 1);

  // 1e38 * 65536 overflows fp32: the scaled gradient is inf.
  opt.zero_grad();
  const std::vector<double> before = values(p);
  scaler.scale((p * 1e38).sum()).backward();
  CHECK(std::isinf(values(p.grad())[0]));
  CHECK_FALSE(scaler.step(opt));
  CHECK(values(p) == before);
  scaler.update();
  CHECK(scaler.get_scale() == 32768.0);
  CHECK(scaler.growth_tracker() == 0);

  // A NaN counts the same.
  opt.zero_grad();
  p.set_grad(tensor({std::numeric_limits<float>::quiet_NaN(), 1.0f}));
  CHECK_FALSE(scaler.step(opt));
  CHECK(values(p) == before);
  scaler.update();
  CHECK(scaler.get_scale() == 16384.0);
}

TEST_CASE("GradScaler: the scale grows after growth_interval clean steps in a row") {
  Tensor p = tensor({1.0f}).requires_grad_();
  optim::SGD opt({p}, {.lr = 0.0});
  GradScaler scaler({.init_scale = 8.0, .growth_interval = 3});
  auto iteration = [&](double grad) {
    opt.zero_grad();
    p.set_grad(tensor({static_cast<float>(grad)}));
    scaler.step(opt);
    scaler.update();
  };
  iteration(1);
  iteration(1);
  CHECK(scaler.get_scale() == 8.0);
  CHECK(scaler.growth_tracker() == 2);
  iteration(1);
  CHECK(scaler.get_scale() == 16.0);
  CHECK(scaler.growth_tracker() == 0);
  iteration(1);
  iteration(1);
  iteration(std::numeric_limits<double>::infinity());  // resets the count
  CHECK(scaler.get_scale() == 8.0);
  iteration(1);
  iteration(1);
  CHECK(scaler.get_scale() == 8.0);
  iteration(1);
  CHECK(scaler.get_scale() == 16.0);
}

TEST_CASE("GradScaler: unscale_ before step is not repeated by step, and misuse is refused") {
  Tensor p = tensor({1.0f}).requires_grad_();
  optim::SGD opt({p}, {.lr = 1.0});
  GradScaler scaler({.init_scale = 4.0});
  scaler.scale(p * 3).sum().backward();
  scaler.unscale_(opt);
  CHECK(values(p.grad()) == std::vector<double>{3.0});
  CHECK_THROWS_AS(scaler.unscale_(opt), ValueError);
  CHECK(scaler.step(opt));
  CHECK(values(p) == std::vector<double>{-2.0});  // divided once, not twice
  CHECK_THROWS_AS(scaler.step(opt), ValueError);
  scaler.update();
  CHECK_THROWS_AS(scaler.update(), ValueError);  // nothing checked since the last update

  Tensor h = tensor({1.0f}, TensorOptions().dtype(DType::Float16)).requires_grad_();
  optim::SGD opt16({h}, {.lr = 1.0});
  (h * 2).sum().backward();
  CHECK_THROWS_AS(scaler.unscale_(opt16), TypeError);

  CHECK_THROWS_AS(GradScaler({.growth_factor = 0.5}), ValueError);
  CHECK_THROWS_AS(GradScaler({.backoff_factor = 1.0}), ValueError);
  CHECK_THROWS_AS(GradScaler({.growth_interval = 0}), ValueError);
}

TEST_CASE("GradScaler: a disabled scaler leaves the loss alone and always steps") {
  Tensor p = tensor({1.0f}).requires_grad_();
  optim::SGD opt({p}, {.lr = 1.0});
  GradScaler scaler({.enabled = false});
  Tensor loss = (p * 3).sum();
  CHECK(scaler.scale(loss).is_same(loss));
  CHECK(scaler.get_scale() == 1.0);
  loss.backward();
  CHECK(scaler.step(opt));
  scaler.update();
  CHECK(values(p) == std::vector<double>{-2.0});
}

TEST_CASE("GradScaler: a small MLP trains under fp16 autocast on the CPU, backing off from a too-large scale") {
  default_generator(DeviceType::CPU).manual_seed(7);
  Tensor x = rand({128, 3}) * 2 - 1;
  Tensor y = ((x.select(1, 0) * 2).sin() + x.select(1, 1) * x.select(1, 2)).unsqueeze(1);
  Tensor w1 = (randn({32, 3}) * (1 / std::sqrt(3.0))).requires_grad_(), b1 = zeros({32}).requires_grad_();
  Tensor w2 = (randn({1, 32}) * (1 / std::sqrt(32.0))).requires_grad_(), b2 = zeros({1}).requires_grad_();
  optim::SGD opt({w1, b1, w2, b2}, {.lr = 0.1, .momentum = 0.9});
  // 2^30 is far beyond what fp16 gradients hold: the first steps overflow and are skipped.
  GradScaler scaler({.init_scale = 1073741824.0, .growth_interval = 100});
  int skipped = 0;
  double loss_value = 0;
  for (int i = 0; i < 400; ++i) {
    opt.zero_grad();
    Tensor loss;
    {
      autocast::AutocastGuard amp(DeviceType::CPU, DType::Float16);
      Tensor out = linear(linear(x, w1, b1).tanh(), w2, b2);
      CHECK(out.dtype() == DType::Float16);
      Tensor diff = out - y;  // fp16 - fp32: fp32
      loss = (diff * diff).mean();
    }
    scaler.scale(loss).backward();
    if (!scaler.step(opt)) ++skipped;
    scaler.update();
    loss_value = loss.item<double>();
  }
  MESSAGE("fp16 autocast + GradScaler: loss " << loss_value << ", " << skipped << " steps skipped, scale "
                                              << scaler.get_scale());
  CHECK(skipped > 0);
  CHECK(scaler.get_scale() < 1073741824.0);
  CHECK(w1.grad().dtype() == DType::Float32);
  CHECK(loss_value < 0.02);
}
