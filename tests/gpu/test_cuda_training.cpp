// Training for real on CUDA: the two-layer MLP of tests/autograd/test_training.cpp, its
// parameters, data, forward, backward and optimizer steps all on the device, reaches the same
// target loss with SGD (momentum) and with AdamW; its first gradients match the CPU's.
#include <cmath>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

struct Mlp {
  Tensor w1, b1, w2, b2;
  // The same initial values on either device: drawn on the CPU, then moved.
  Mlp(int64_t in, int64_t hidden, Device device) {
    auto param = [&](const Tensor& cpu) { return cpu.to(device).requires_grad_(); };
    w1 = param(randn({hidden, in}) * (1.0 / std::sqrt(static_cast<double>(in))));
    b1 = param(zeros({hidden}));
    w2 = param(randn({1, hidden}) * (1.0 / std::sqrt(static_cast<double>(hidden))));
    b2 = param(zeros({1}));
  }
  Tensor operator()(const Tensor& x) const { return linear(linear(x, w1, b1).tanh(), w2, b2); }
  std::vector<Tensor> params() const { return {w1, b1, w2, b2}; }
};

// y = sin(2 x0) + x1 * x2, drawn on the CPU.
std::pair<Tensor, Tensor> task(int64_t n) {
  Tensor x = rand({n, 3}) * 2 - 1;
  Tensor y = ((x.select(1, 0) * 2).sin() + x.select(1, 1) * x.select(1, 2)).unsqueeze(1);
  return {x, y};
}

Tensor mse(const Mlp& model, const Tensor& x, const Tensor& y) {
  Tensor diff = model(x) - y;
  return (diff * diff).mean();
}

// `steps` optimizer steps; the loss is read back (a synchronization) only after the last one.
template <typename Opt>
double train(Opt& opt, const Mlp& model, const Tensor& x, const Tensor& y, int steps) {
  Tensor loss;
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    loss = mse(model, x, y);
    loss.backward();
    opt.step();
  }
  CHECK(loss.is_cuda());
  return loss.item<double>();
}

}  // namespace

TEST_CASE("cuda training: the first gradients of the MLP match the CPU's") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(3);
  auto [x, y] = task(64);
  manual_seed(5);
  const Mlp cpu(3, 32, Device(DeviceType::CPU));
  manual_seed(5);
  const Mlp gpu(3, 32, kCuda);
  mse(cpu, x, y).backward();
  mse(gpu, x.to(kCuda), y.to(kCuda)).backward();
  for (size_t i = 0; i < cpu.params().size(); ++i) {
    CAPTURE(i);
    const Tensor g = gpu.params()[i].grad();
    REQUIRE(g.defined());
    CHECK(g.is_cuda());
    CHECK((g.cpu() - cpu.params()[i].grad()).abs().max().item<double>() < 1e-5);
  }
}

TEST_CASE("cuda training: a two-layer MLP reaches the target loss with SGD and momentum") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(7);
  auto [x, y] = task(128);
  const Mlp model(3, 32, kCuda);
  optim::SGD opt(model.params(), {.lr = 0.1, .momentum = 0.9});
  const double final_loss = train(opt, model, x.to(kCuda), y.to(kCuda), 400);
  MESSAGE("SGD on CUDA: loss -> " << final_loss);
  CHECK(final_loss < 0.01);
}

TEST_CASE("cuda training: the same MLP reaches the target loss with AdamW") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(11);
  auto [x, y] = task(128);
  const Mlp model(3, 32, kCuda);
  optim::AdamW opt(model.params(), {.lr = 0.01, .weight_decay = 1e-4});
  const double final_loss = train(opt, model, x.to(kCuda), y.to(kCuda), 400);
  MESSAGE("AdamW on CUDA: loss -> " << final_loss);
  CHECK(final_loss < 0.01);
}
