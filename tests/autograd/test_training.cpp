// Training for real: a two-layer MLP fitted to a synthetic regression task with SGD (momentum)
// and with AdamW; the optimizers' update rules against hand-computed steps.
#include <doctest/doctest.h>

#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

struct Mlp {
  Tensor w1, b1, w2, b2;
  explicit Mlp(int64_t in, int64_t hidden) {
    w1 = (randn({hidden, in}) * (1.0 / std::sqrt(static_cast<double>(in)))).requires_grad_();
    b1 = zeros({hidden}).requires_grad_();
    w2 = (randn({1, hidden}) * (1.0 / std::sqrt(static_cast<double>(hidden)))).requires_grad_();
    b2 = zeros({1}).requires_grad_();
  }
  Tensor operator()(const Tensor& x) const { return linear(linear(x, w1, b1).tanh(), w2, b2); }
  std::vector<Tensor> params() const { return {w1, b1, w2, b2}; }
};

// y = sin(2 x0) + x1 * x2: smooth, needs the hidden layer.
std::pair<Tensor, Tensor> task(int64_t n) {
  Tensor x = rand({n, 3}) * 2 - 1;
  Tensor y = ((x.select(1, 0) * 2).sin() + x.select(1, 1) * x.select(1, 2)).unsqueeze(1);
  return {x, y};
}

template <typename Opt>
double train(Opt& opt, const Mlp& model, const Tensor& x, const Tensor& y, int steps) {
  double loss_value = 0;
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    Tensor diff = model(x) - y;
    Tensor loss = (diff * diff).mean();
    loss.backward();
    opt.step();
    loss_value = loss.item<double>();
  }
  return loss_value;
}

}  // namespace

TEST_CASE("training: a two-layer MLP reaches the target loss with SGD and momentum") {
  default_generator(DeviceType::CPU).manual_seed(7);
  auto [x, y] = task(128);
  Mlp model(3, 32);
  const double start = ((model(x) - y) * (model(x) - y)).mean().item<double>();
  optim::SGD opt(model.params(), {.lr = 0.1, .momentum = 0.9});
  const double final_loss = train(opt, model, x, y, 400);
  MESSAGE("SGD: loss " << start << " -> " << final_loss);
  CHECK(final_loss < 0.01);
}

TEST_CASE("training: the same MLP reaches the target loss with AdamW") {
  default_generator(DeviceType::CPU).manual_seed(11);
  auto [x, y] = task(128);
  Mlp model(3, 32);
  optim::AdamW opt(model.params(), {.lr = 0.01, .weight_decay = 1e-4});
  const double final_loss = train(opt, model, x, y, 400);
  MESSAGE("AdamW: loss -> " << final_loss);
  CHECK(final_loss < 0.01);
}

TEST_CASE("optim: SGD with momentum and AdamW take PyTorch's steps") {
  Tensor p = tensor({1.0, -2.0}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.5, .weight_decay = 0.1});
  for (int i = 0; i < 2; ++i) {
    sgd.zero_grad();
    (p * p).sum().backward();  // grad 2p
    sgd.step();
  }
  // step 1: g = 2p + 0.1p = 2.1p, buf = g, p -= 0.1 g -> p * 0.79
  // step 2: g = 2.1 * 0.79 p0, buf = 0.5 * 2.1 p0 + g, p = 0.79 p0 - 0.1 * buf
  const double p1 = 0.79, g2 = 2.1 * p1, buf2 = 0.5 * 2.1 + g2, p2 = p1 - 0.1 * buf2;
  CHECK(p.select(0, 0).item<double>() == doctest::Approx(p2));
  CHECK(p.select(0, 1).item<double>() == doctest::Approx(-2 * p2));

  Tensor q = tensor({0.5}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  optim::AdamW adamw({q}, {.lr = 0.1, .weight_decay = 0.5});
  adamw.zero_grad();
  (q * 3).sum().backward();
  adamw.step();
  // First step: decay q by (1 - lr wd), then m_hat / sqrt(v_hat) = sign(g) = 1.
  CHECK(q.item<double>() == doctest::Approx(0.5 * (1 - 0.05) - 0.1 * 3 / (3 + 1e-8)));
  CHECK_THROWS_AS(optim::SGD({q * 2}, {}), ValueError);
}
