// Each layer's forward against the same computation written with plain engine ops, dropout's
// modes, the padding row's gradient, and a small model that trains with optim::SGD.
#include <doctest/doctest.h>

#include <cmath>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

using namespace anatomy;

TEST_CASE("nn: Linear, Embedding, LayerNorm and RMSNorm against plain ops") {
  manual_seed(2);
  nn::Linear lin(5, 3);
  const Tensor x = randn({2, 4, 5});
  CHECK(lin.forward(x).allclose(x.matmul(lin.weight.t()) + lin.bias, 1e-5, 1e-6));
  nn::Linear no_bias(5, 3, false);
  CHECK(no_bias.forward(x).allclose(x.matmul(no_bias.weight.t()), 1e-5, 1e-6));
  CHECK(nn::Linear(0, 3).forward(empty({2, 0})).equal(zeros({2, 3})));

  nn::Embedding emb(6, 4, 2);
  const Tensor idx = tensor<int64_t>({1, 2, 5, 2}).reshape({2, 2});
  CHECK(emb.forward(idx).equal(emb.weight.index_select(0, idx.flatten()).reshape({2, 2, 4})));
  CHECK(emb.forward(idx).select(0, 0).select(0, 1).eq(0).all().item<bool>());

  nn::LayerNorm ln({5});
  {
    autograd::NoGradGuard no_grad;
    ln.weight.normal_();
    ln.bias.normal_();
  }
  const Tensor mean = x.mean(std::vector<int64_t>{-1}, true);
  const Tensor var = x.var(std::vector<int64_t>{-1}, 0, true);
  CHECK(ln.forward(x).allclose((x - mean) / (var + 1e-5).sqrt() * ln.weight + ln.bias, 1e-4, 1e-5));
  nn::LayerNorm ln2({4, 5}, 1e-3, false);
  const Tensor m2 = x.mean(std::vector<int64_t>{-2, -1}, true);
  const Tensor v2 = x.var(std::vector<int64_t>{-2, -1}, 0, true);
  CHECK(ln2.forward(x).allclose((x - m2) / (v2 + 1e-3).sqrt(), 1e-4, 1e-5));

  nn::RMSNorm rms({5}, 1e-6);
  {
    autograd::NoGradGuard no_grad;
    rms.weight.normal_();
  }
  const Tensor ms = (x * x).mean(std::vector<int64_t>{-1}, true);
  CHECK(rms.forward(x).allclose(x / (ms + 1e-6).sqrt() * rms.weight, 1e-4, 1e-5));
}

TEST_CASE("nn: the activations and Softmax against plain ops") {
  manual_seed(3);
  const Tensor x = randn({3, 7});
  CHECK(nn::ReLU().forward(x).equal(x.clamp(0.0)));
  CHECK(nn::Tanh().forward(x).allclose(x.tanh()));
  CHECK(nn::SiLU().forward(x).allclose(x / (1 + (-x).exp()), 1e-5, 1e-6));
  CHECK(nn::GELU().forward(x).allclose(x * 0.5 * (1 + (x / std::sqrt(2.0)).erf()), 1e-5, 1e-6));
  const Tensor inner = (x + x * x * x * 0.044715) * std::sqrt(2.0 / M_PI);
  CHECK(nn::GELU("tanh").forward(x).allclose(x * 0.5 * (1 + inner.tanh()), 1e-5, 1e-6));
  const Tensor e = (x - x.amax(std::vector<int64_t>{0}, true)).exp();
  CHECK(nn::Softmax(0).forward(x).allclose(e / e.sum(std::vector<int64_t>{0}, true), 1e-5, 1e-6));
}

TEST_CASE("nn: Flatten merges start_dim..end_dim as flatten does") {
  const Tensor x = randn({2, 3, 4, 5});
  CHECK(nn::Flatten().forward(x).equal(x.reshape({2, 60})));
  CHECK(nn::Flatten(0, 1).forward(x).sizes().vec() == std::vector<int64_t>{6, 4, 5});
  CHECK(nn::Flatten(-2).forward(x).sizes().vec() == std::vector<int64_t>{2, 3, 20});
  CHECK(nn::Flatten().repr() == "Flatten(start_dim=1, end_dim=-1)");
  CHECK(nn::Flatten().state_dict().empty());
}

TEST_CASE("nn: Dropout zeroes and rescales in training and is the identity in eval") {
  manual_seed(4);
  nn::Dropout drop(0.25);
  const Tensor x = ones({200, 200});
  const Tensor y = drop.forward(x);
  const double kept = y.ne(0).to(DType::Float64).mean().item<double>();
  CHECK(kept == doctest::Approx(0.75).epsilon(0.02));
  CHECK(y.masked_select(y.ne(0)).allclose(full({1}, 1 / 0.75)));
  drop.eval();
  CHECK(drop.forward(x).equal(x));
  nn::Dropout all(1.0);
  CHECK(all.forward(x).eq(0).all().item<bool>());
}

TEST_CASE("nn: the Embedding padding row gets no gradient") {
  nn::Embedding emb(5, 3, 0);
  const Tensor idx = tensor<int64_t>({0, 1, 0, 4});
  (emb.forward(idx) * randn({4, 3})).sum().backward();
  const Tensor g = emb.weight.grad();
  REQUIRE(g.defined());
  CHECK(g.select(0, 0).eq(0).all().item<bool>());
  CHECK(g.select(0, 1).ne(0).any().item<bool>());
  CHECK(g.select(0, 2).eq(0).all().item<bool>());
}

TEST_CASE("nn: a small model trains with optim::SGD and its loss decreases") {
  manual_seed(6);
  auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(3, 16), std::make_shared<nn::GELU>(),
                                                std::make_shared<nn::LayerNorm>(std::vector<int64_t>{16}),
                                                std::make_shared<nn::Linear>(16, 1));
  const Tensor x = rand({64, 3}) * 2 - 1;
  const Tensor y = ((x.select(1, 0) * 2).sin() + x.select(1, 1) * x.select(1, 2)).unsqueeze(1);
  optim::SGD opt(model->parameters(), {.lr = 0.05, .momentum = 0.9});
  auto loss_fn = [&] {
    const Tensor d = model->forward(x) - y;
    return (d * d).mean();
  };
  const double first = loss_fn().item<double>();
  double last = first;
  for (int step = 0; step < 60; ++step) {
    model->zero_grad();
    Tensor loss = loss_fn();
    loss.backward();
    for (const Tensor& p : model->parameters()) REQUIRE(p.grad().defined());
    opt.step();
    last = loss.item<double>();
  }
  MESSAGE("loss " << first << " -> " << last);
  CHECK(last < 0.5 * first);
}
