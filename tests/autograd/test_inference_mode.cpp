// InferenceMode: tensors made inside it are inference tensors (no version counter), with
// PyTorch's rules: they cannot be saved for backward, nor written in place outside the mode;
// normal tensors written inside the mode still count versions.
#include <doctest/doctest.h>

#include "anatomy/anatomy.h"

using namespace anatomy;

TEST_CASE("inference mode: tensors made inside are inference tensors, their views too, with no version") {
  Tensor normal = ones({2, 3});
  CHECK(!normal.is_inference());
  Tensor made;
  {
    autograd::InferenceMode guard;
    CHECK(autograd::InferenceMode::is_enabled());
    CHECK(!autograd::GradMode::is_enabled());
    made = ones({2, 3}) * 2;
    CHECK(made.is_inference());
    CHECK(made.view({6}).is_inference());
    CHECK(made.transpose(0, 1).is_inference());
    // A view of a normal tensor made inside the mode shares the normal tensor's counter.
    CHECK(!normal.view({6}).is_inference());
    // In-place inside the mode: allowed, nothing counted, the values change.
    made.add_(ones_like(made));
    made.view({6}).mul_(full({6}, 2.0));
    CHECK(made.sum().item<double>() == doctest::Approx(36));
    CHECK_THROWS_WITH_AS(made.version(), doctest::Contains("inference tensor"), ValueError);
  }
  CHECK(!autograd::InferenceMode::is_enabled());
  CHECK(autograd::GradMode::is_enabled());
  CHECK(made.is_inference());
  CHECK(!ones({1}).is_inference());
  CHECK_THROWS_WITH_AS(made.version(), doctest::Contains("does not track versions"), ValueError);
  // Out-of-place use outside the mode is fine and makes normal tensors.
  Tensor sum = made + 1;
  CHECK(!sum.is_inference());
  CHECK(!made.clone().is_inference());
  CHECK_NOTHROW(made.clone().version());
}

TEST_CASE("inference mode: normal tensors written in place inside the mode still bump their version") {
  Tensor x = zeros({4});
  const uint32_t v0 = x.version();
  {
    autograd::InferenceMode guard;
    x.add_(ones_like(x));
    x.view({2, 2}).fill_(3);
  }
  CHECK(x.version() == v0 + 2);
}

TEST_CASE("inference mode: an in-place op on an inference tensor outside the mode raises before writing") {
  Tensor t;
  {
    autograd::InferenceMode guard;
    t = zeros({3});
  }
  CHECK_THROWS_WITH_AS(t.add_(ones_like(t)), doctest::Contains("inference tensor outside InferenceMode"), ValueError);
  CHECK_THROWS_AS(t.mul_(t), ValueError);
  CHECK_THROWS_AS(t.fill_(2), ValueError);
  CHECK_THROWS_AS(t.copy_(ones({3})), ValueError);
  CHECK_THROWS_AS(exp_(t.view({3})), ValueError);
  CHECK_THROWS_AS(add_out(t, ones({3}), ones({3})), ValueError);
  // Nothing was written.
  CHECK(t.abs().sum().item<double>() == 0);
  // Inside a nested InferenceMode(false) the tensor is still an inference tensor, written
  // outside the mode.
  {
    autograd::InferenceMode guard;
    {
      autograd::InferenceMode off(false);
      CHECK(!autograd::InferenceMode::is_enabled());
      CHECK(autograd::GradMode::is_enabled());
      CHECK_THROWS_AS(t.add_(ones_like(t)), ValueError);
      CHECK(!zeros({1}).is_inference());
    }
    CHECK(autograd::InferenceMode::is_enabled());
    t.add_(ones_like(t));
  }
  CHECK(t.sum().item<double>() == doctest::Approx(3));
}

TEST_CASE("inference mode: inference tensors cannot be saved for backward, and the error names the operator") {
  Tensor x;
  {
    autograd::InferenceMode guard;
    x = ones({2, 2}, TensorOptions().dtype(DType::Float64));
  }
  Tensor w = ones({2, 2}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  // mul saves both operands: x cannot be saved.
  CHECK_THROWS_WITH_AS(x * w, doctest::Contains("mul.Tensor: Inference tensors"), ValueError);
  CHECK_THROWS_WITH_AS(x.mm(w), doctest::Contains("Inference tensors cannot be saved for backward"), ValueError);
  // add saves nothing: recording works, and the gradient reaches w.
  Tensor y = (x + w).sum();
  y.backward();
  CHECK(w.grad().sum().item<double>() == doctest::Approx(4));
  // A clone is a normal tensor and can be saved.
  (x.clone() * w).sum().backward();
  CHECK(w.grad().sum().item<double>() == doctest::Approx(8));
}

TEST_CASE("inference mode: requires_grad_ on an inference tensor makes a leaf, and ops that save it raise") {
  Tensor x;
  {
    autograd::InferenceMode guard;
    x = full({3}, 2.0, TensorOptions().dtype(DType::Float64));
  }
  x.requires_grad_();
  CHECK(x.is_leaf());
  CHECK(x.requires_grad());
  Tensor y = (x + 1).sum();  // add saves nothing
  y.backward();
  CHECK(x.grad().sum().item<double>() == doctest::Approx(3));
  CHECK(!x.grad().is_inference());
  CHECK_THROWS_WITH_AS(x * x, doctest::Contains("Inference tensors cannot be saved"), ValueError);
  // sin saves its input: refused; relu saves its output, a normal tensor: recorded.
  CHECK_THROWS_WITH_AS(x.sin(), doctest::Contains("sin: Inference tensors"), ValueError);
  Tensor r = x.relu().sum();
  r.backward();
  CHECK(x.grad().sum().item<double>() == doctest::Approx(6));
}

TEST_CASE("inference mode: outputs made inside the mode with grad re-enabled cannot be saved") {
  Tensor w = ones({2}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  autograd::InferenceMode guard;
  autograd::EnableGradGuard grad_on;
  // exp's output would be saved, and it is an inference tensor.
  CHECK_THROWS_WITH_AS(w.exp(), doctest::Contains("Inference tensors cannot be saved"), ValueError);
}
