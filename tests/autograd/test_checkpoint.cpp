// Activation checkpointing: the gradients equal the un-checkpointed ones (dropout inside sees the
// same mask), the peak of the CPU allocator is lower, nested checkpoints work, and the cases it
// does not support raise clear errors.
#include <doctest/doctest.h>

#include <functional>
#include <vector>

#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item<double>(); }

// One layer of the MLP: element-wise steps after the product that save four full-size
// activations for backward (tanh's and sigmoid's results, the products' operands), so
// activations dominate the memory of a recorded forward.
Tensor layer(const Tensor& h, const Tensor& w, const Tensor& b) {
  Tensor a = (h.mm(w) + b).tanh();
  Tensor s = a.sigmoid();
  Tensor m = a * s;
  return m.sin() * s;
}

struct Mlp {
  std::vector<Tensor> weights, biases;
  Mlp(int layers, int64_t width) {
    manual_seed(1234);
    for (int i = 0; i < layers; ++i) {
      weights.push_back((randn({width, width}) * (1.0 / std::sqrt(static_cast<double>(width)))).requires_grad_());
      biases.push_back((randn({width}) * 0.1).requires_grad_());
    }
  }
  void zero_grad() {
    for (Tensor& w : weights) w.set_grad(Tensor());
    for (Tensor& b : biases) b.set_grad(Tensor());
  }
};

// Runs forward and backward; returns the allocator's peak over the call, above what was held at
// its start.
int64_t forward_backward(Mlp& mlp, const Tensor& x, bool checkpointed) {
  alloc::reset_cpu_peak_stats();
  const int64_t start = alloc::cpu_allocator_stats().reserved_bytes;
  Tensor h = x;
  for (size_t i = 0; i < mlp.weights.size(); ++i) {
    const Tensor& w = mlp.weights[i];
    const Tensor& b = mlp.biases[i];
    if (checkpointed) {
      h = autograd::checkpoint(
          [&w, &b](const std::vector<Tensor>& in) { return std::vector<Tensor>{layer(in[0], w, b)}; }, {h})[0];
    } else {
      h = layer(h, w, b);
    }
  }
  Tensor loss = (h * h).mean();
  h = Tensor();
  loss.backward();
  return alloc::cpu_allocator_stats().peak_bytes - start;
}

}  // namespace

TEST_CASE("checkpoint: an 8-layer MLP gets the same gradients with a clearly lower allocator peak") {
  constexpr int64_t kBatch = 2048, kWidth = 128;
  Mlp mlp(8, kWidth);
  // The input requires grad so that every layer's checkpoint records (as PyTorch's reentrant
  // checkpoint, a call whose inputs need no grad records nothing).
  Tensor x = randn({kBatch, kWidth}).requires_grad_();

  const int64_t plain_peak = forward_backward(mlp, x, false);
  std::vector<Tensor> plain_grads;
  for (size_t i = 0; i < mlp.weights.size(); ++i) {
    plain_grads.push_back(mlp.weights[i].grad());
    plain_grads.push_back(mlp.biases[i].grad());
  }
  plain_grads.push_back(x.grad());
  mlp.zero_grad();
  x.set_grad(Tensor());

  const int64_t ckpt_peak = forward_backward(mlp, x, true);
  std::vector<Tensor> ckpt_grads;
  for (size_t i = 0; i < mlp.weights.size(); ++i) {
    ckpt_grads.push_back(mlp.weights[i].grad());
    ckpt_grads.push_back(mlp.biases[i].grad());
  }
  ckpt_grads.push_back(x.grad());

  REQUIRE(plain_grads.size() == ckpt_grads.size());
  for (size_t i = 0; i < plain_grads.size(); ++i) {
    REQUIRE(plain_grads[i].defined());
    REQUIRE(ckpt_grads[i].defined());
    const double scale = plain_grads[i].abs().max().item<double>();
    CHECK(max_abs_diff(plain_grads[i], ckpt_grads[i]) <= 1e-5 * scale + 1e-7);
  }
  const int64_t activation = kBatch * kWidth * 4;
  MESSAGE("peak above start: " << plain_peak << " bytes without checkpoint, " << ckpt_peak << " with (" << activation
                               << " bytes per activation)");
  // Without checkpointing each layer keeps about five activations; with it, one, plus one layer's
  // recomputation at a time during backward.
  CHECK(plain_peak > 30 * activation);
  CHECK(ckpt_peak < plain_peak * 6 / 10);
}

TEST_CASE("checkpoint: dropout inside sees the same mask on recomputation, and the generator is left as it was") {
  Tensor w = randn({16, 16}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  Tensor x = randn({8, 16}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  auto fn = [&w](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{dropout(in[0].mm(w), 0.5, /*train=*/true).relu()};
  };
  manual_seed(7);
  Tensor plain = fn({x})[0];
  plain.sum().backward();
  const Tensor gw = w.grad(), gx = x.grad();
  w.set_grad(Tensor());
  x.set_grad(Tensor());

  manual_seed(7);
  Tensor ckpt = autograd::checkpoint(fn, {x})[0];
  CHECK(max_abs_diff(plain, ckpt) == 0);
  const uint64_t offset_after_forward = default_generator(DeviceType::CPU).offset();
  ckpt.sum().backward();
  CHECK(default_generator(DeviceType::CPU).offset() == offset_after_forward);
  CHECK(max_abs_diff(gw, w.grad()) < 1e-12);
  CHECK(max_abs_diff(gx, x.grad()) < 1e-12);
}

TEST_CASE("checkpoint: every device's generator is rewound for the recomputation and left as it was") {
  // A CUDA dropout reserves counters of the CUDA generator; this stands in for it without a GPU.
  Generator& cuda_gen = default_generator(DeviceType::CUDA);
  cuda_gen.manual_seed(11);
  cuda_gen.set_offset(100);
  std::vector<uint64_t> seen;
  Tensor x = randn({4}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  auto fn = [&](const std::vector<Tensor>& in) {
    seen.push_back(cuda_gen.reserve(8));
    return std::vector<Tensor>{in[0] * Scalar(2)};
  };
  Tensor out = autograd::checkpoint(fn, {x})[0];
  cuda_gen.reserve(3);  // the caller draws more before backward
  out.sum().backward();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == 100);
  CHECK(seen[1] == 100);            // the recomputation started where the forward did
  CHECK(cuda_gen.offset() == 111);  // and the caller's stream did not move
  CHECK(cuda_gen.seed() == 11);
}

TEST_CASE("checkpoint: nested checkpoints, several inputs and outputs, inputs without grad") {
  auto opts = TensorOptions().dtype(DType::Float64);
  Tensor a = randn({5}, opts).requires_grad_();
  Tensor b = randn({5}, opts).requires_grad_();
  Tensor c = randn({5}, opts);  // no grad
  auto inner = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] * in[1]).sin()}; };
  auto outer = [&](const std::vector<Tensor>& in) {
    Tensor s = autograd::checkpoint(inner, {in[0], in[1]})[0];
    return std::vector<Tensor>{s * in[2], (s + in[0]).exp()};
  };
  auto loss_of = [](const std::vector<Tensor>& outs) { return outs[0].sum() + (outs[1] * 0.5).sum(); };

  loss_of(outer({a, b, c})).backward();
  const Tensor ga = a.grad(), gb = b.grad();
  a.set_grad(Tensor());
  b.set_grad(Tensor());

  std::vector<Tensor> outs = autograd::checkpoint(outer, {a, b, c});
  REQUIRE(outs.size() == 2);
  REQUIRE(outs[0].grad_fn() != nullptr);
  CHECK(outs[0].grad_fn()->name() == "CheckpointBackward");
  CHECK(outs[0].grad_fn() == outs[1].grad_fn());
  loss_of(outs).backward();
  CHECK(max_abs_diff(ga, a.grad()) < 1e-12);
  CHECK(max_abs_diff(gb, b.grad()) < 1e-12);
  CHECK(!c.grad().defined());
}

TEST_CASE("checkpoint: retain_graph recomputes again, and without it a second backward says so") {
  auto opts = TensorOptions().dtype(DType::Float64);
  Tensor x = randn({4}, opts).requires_grad_();
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].exp()}; };
  Tensor y = autograd::checkpoint(fn, {x})[0].sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  CHECK(max_abs_diff(x.grad(), x.exp() * 2) < 1e-12);
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("retain_graph"), ValueError);
}

TEST_CASE("checkpoint: an input modified in place before backward is an error naming CheckpointBackward") {
  auto opts = TensorOptions().dtype(DType::Float64);
  Tensor w = randn({4}, opts).requires_grad_();
  Tensor h = w * 2;
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].sin()}; };
  Tensor y = autograd::checkpoint(fn, {h})[0].sum();
  {
    autograd::NoGradGuard no_grad;
    h.add_(ones_like(h));
  }
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("CheckpointBackward"), ValueError);
}

TEST_CASE("checkpoint: create_graph and autograd::grad through a checkpoint raise clear errors") {
  auto opts = TensorOptions().dtype(DType::Float64);
  Tensor x = randn({3}, opts).requires_grad_();
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[0]}; };
  Tensor y = autograd::checkpoint(fn, {x})[0].sum();
  CHECK_THROWS_WITH_AS(y.backward(Tensor(), true, /*create_graph=*/true), doctest::Contains("create_graph"),
                       NotImplementedError);
  CHECK_THROWS_WITH_AS(autograd::grad({y}, {x}, {}, true), doctest::Contains("autograd::grad()"), NotImplementedError);
  // Under no_grad, or with no input requiring grad, it just calls the function.
  Tensor plain = randn({3}, opts);
  CHECK(autograd::checkpoint(fn, {plain})[0].grad_fn() == nullptr);
  autograd::NoGradGuard no_grad;
  CHECK(autograd::checkpoint(fn, {x})[0].grad_fn() == nullptr);
}
