// The autograd engine: leaves and grad_fn, accumulation, retain_graph, create_graph, hooks,
// retain_grad, grad() leaving .grad alone, saved-tensor version checks, in-place rules, no-grad.
#include <doctest/doctest.h>

#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

Tensor leaf(std::initializer_list<double> values) {
  std::vector<double> v(values);
  return tensor(v, {static_cast<int64_t>(v.size())}, TensorOptions().dtype(DType::Float64)).requires_grad_();
}

double at(const Tensor& t, int64_t i) { return t.contiguous().view({-1}).select(0, i).item<double>(); }

}  // namespace

TEST_CASE("autograd: y = sum(x * x + 3x) gives 2x + 3 in x.grad, leaves and grad_fn") {
  Tensor x = leaf({1, 2, 3});
  Tensor y = (x * x + x * 3).sum();
  CHECK(x.is_leaf());
  CHECK(!y.is_leaf());
  CHECK(y.requires_grad());
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name() == "SumBackward0");
  y.backward();
  REQUIRE(x.grad().defined());
  CHECK(at(x.grad(), 0) == doctest::Approx(5));
  CHECK(at(x.grad(), 1) == doctest::Approx(7));
  CHECK(at(x.grad(), 2) == doctest::Approx(9));
}

TEST_CASE("autograd: gradients accumulate across backward calls and over shared uses") {
  Tensor x = leaf({2});
  Tensor y = x * x * x;  // x used three times
  y.backward(Tensor(), /*retain_graph=*/true);
  CHECK(at(x.grad(), 0) == doctest::Approx(12));
  y.backward();
  CHECK(at(x.grad(), 0) == doctest::Approx(24));
}

TEST_CASE("autograd: a second backward without retain_graph is an error that says so") {
  Tensor x = leaf({1, 2});
  Tensor y = (x.exp()).sum();
  y.backward();
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("retain_graph"), ValueError);
}

TEST_CASE("autograd: backward on a non-scalar needs a gradient, a tensor without grad is refused") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 2;
  CHECK_THROWS_AS(y.backward(), ValueError);
  y.backward(ones_like(y));
  CHECK(at(x.grad(), 1) == doctest::Approx(2));
  Tensor plain = ones({2});
  CHECK_THROWS_WITH_AS(plain.sum().backward(), doctest::Contains("does not require grad"), ValueError);
}

TEST_CASE("autograd: grad() returns gradients and leaves .grad alone, allow_unused") {
  Tensor x = leaf({1, 2}), z = leaf({5});
  Tensor y = (x * x).sum();
  auto g = autograd::grad({y}, {x}, {}, true);
  CHECK(at(g[0], 1) == doctest::Approx(4));
  CHECK(!x.grad().defined());
  CHECK_THROWS_AS(autograd::grad({y}, {z}, {}, true), ValueError);
  auto u = autograd::grad({y}, {z}, {}, true, false, /*allow_unused=*/true);
  CHECK(!u[0].defined());
}

TEST_CASE("autograd: create_graph gives a differentiable gradient (double backward)") {
  Tensor x = leaf({3});
  Tensor y = x * x * x;  // dy/dx = 3x^2, d2y/dx2 = 6x
  auto g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  CHECK(at(g[0], 0) == doctest::Approx(27));
  REQUIRE(g[0].requires_grad());
  auto gg = autograd::grad({g[0]}, {x});
  CHECK(at(gg[0], 0) == doctest::Approx(18));
}

TEST_CASE("autograd: a saved tensor modified in place is an error naming the op, the shape and both versions") {
  Tensor x = leaf({1, 2});
  Tensor a = x * 1;
  Tensor y = (a * a).sum();  // mul saves a
  {
    autograd::NoGradGuard no_grad;
    a.add_(ones({2}));
  }
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("MulBackward0"), ValueError);
  Tensor b = x * 1;
  Tensor z = (b * b).sum();
  {
    autograd::NoGradGuard no_grad;
    b.add_(ones({2}));
  }
  try {
    z.backward();
    FAIL("expected an error");
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("[2]") != std::string::npos);
    CHECK(msg.find("version 1") != std::string::npos);
    CHECK(msg.find("version 0") != std::string::npos);
  }
}

TEST_CASE("autograd: in-place ops record history, a leaf that requires grad refuses them") {
  Tensor x = leaf({1, 2});
  CHECK_THROWS_WITH_AS(x.mul_(x), doctest::Contains("leaf"), ValueError);
  Tensor a = x * 1;
  a.mul_(x);  // a = x * x, recorded in place (the old a is kept for the formula)
  CHECK(a.grad_fn()->name() == "MulBackward0");
  a.sum().backward();
  CHECK(at(x.grad(), 0) == doctest::Approx(2));
  CHECK(at(x.grad(), 1) == doctest::Approx(4));
  // A buffer that did not require grad starts to, through an in-place op with one that does.
  Tensor w = leaf({3, 4});
  Tensor buf = zeros({2}, TensorOptions().dtype(DType::Float64));
  buf.add_(w);
  CHECK(buf.requires_grad());
  buf.sum().backward();
  CHECK(at(w.grad(), 0) == doctest::Approx(1));
}

TEST_CASE("autograd: in-place ops on views of tensors that require grad rebase the base's history") {
  // More in tests/autograd/test_inplace_views.cpp.
  Tensor x = leaf({1, 2, 3});
  Tensor base = x * 1;
  Tensor v = base.slice(0, 0, 2);
  v.mul_(leaf({4, 5}));
  CHECK(base.grad_fn()->name() == "CopySlices");
  base.sum().backward();
  CHECK(at(x.grad(), 0) == doctest::Approx(4));
  CHECK(at(x.grad(), 1) == doctest::Approx(5));
  CHECK(at(x.grad(), 2) == doctest::Approx(1));
  // As in PyTorch, v.mul_(v) saves v as the other operand and then changes it: backward refuses.
  Tensor base2 = x * 1;
  Tensor v2 = base2.slice(0, 0, 2);
  v2.mul_(v2);
  CHECK_THROWS_AS(base2.sum().backward(), ValueError);
}

TEST_CASE("autograd: no_grad records nothing, grad mode guards nest") {
  Tensor x = leaf({1});
  {
    autograd::NoGradGuard no_grad;
    Tensor y = x * 2;
    CHECK(!y.requires_grad());
    {
      autograd::EnableGradGuard enable;
      CHECK((x * 2).requires_grad());
    }
    CHECK(!autograd::GradMode::is_enabled());
  }
  CHECK(autograd::GradMode::is_enabled());
  CHECK((x * 2).requires_grad());
}

TEST_CASE("autograd: tensor hooks change gradients, retain_grad keeps a non-leaf's gradient") {
  Tensor x = leaf({1, 2});
  Tensor h = x * 2;
  h.retain_grad();
  h.register_hook([](const Tensor& g) { return g * 10; });
  x.register_hook([](const Tensor& g) { return g + 1; });
  h.sum().backward();
  CHECK(at(h.grad(), 0) == doctest::Approx(10));  // retained after the hook
  CHECK(at(x.grad(), 0) == doctest::Approx(21));  // 10 * 2 + 1
}

TEST_CASE("autograd: broadcasting and mixed dtypes reduce gradients to each input's shape and dtype") {
  Tensor a = randn({3, 1}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  Tensor b = randn({4}, TensorOptions().dtype(DType::Float32)).requires_grad_();
  Tensor y = (a + b).sum();
  y.backward();
  CHECK(a.grad().sizes() == IntArrayRef({3, 1}));
  CHECK(a.grad().dtype() == DType::Float64);
  CHECK(at(a.grad(), 0) == doctest::Approx(4));
  CHECK(b.grad().sizes() == IntArrayRef({4}));
  CHECK(b.grad().dtype() == DType::Float32);
  CHECK(at(b.grad(), 0) == doctest::Approx(3));
}

TEST_CASE("autograd: detach shares data without history, detach_ makes a leaf") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 2;
  Tensor d = y.detach();
  CHECK(!d.requires_grad());
  CHECK(d.data_ptr() == y.data_ptr());
  y.detach_();
  CHECK(y.is_leaf());
  CHECK(!y.requires_grad());
  CHECK_THROWS_AS((x * 2).requires_grad_(false), ValueError);
}

TEST_CASE("autograd: anomaly mode names the forward op of a backward that produced NaN") {
  Tensor x = leaf({0});
  autograd::DetectAnomalyGuard anomaly;
  Tensor y = (x.sqrt() * 0).sum();  // d sqrt at 0 is inf; inf * 0 is NaN
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("sqrt"), ValueError);
}

TEST_CASE("autograd: print_graph and to_dot show nodes, saved shapes and edges") {
  Tensor w = randn({3, 2}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  Tensor x = randn({4, 3}, TensorOptions().dtype(DType::Float64));
  Tensor y = x.mm(w).relu().sum();
  const std::string g = autograd::print_graph(y);
  CHECK(g.find("SumBackward0") != std::string::npos);
  CHECK(g.find("ReluBackward0") != std::string::npos);
  CHECK(g.find("MmBackward0") != std::string::npos);
  CHECK(g.find("[4, 3] fp64") != std::string::npos);
  CHECK(g.find("AccumulateGrad (leaf [3, 2] fp64)") != std::string::npos);
  const std::string dot = autograd::to_dot(y);
  CHECK(dot.find("digraph") == 0);
  CHECK(dot.find("MmBackward0") != std::string::npos);
  CHECK(dot.find("->") != std::string::npos);
}

TEST_CASE("autograd: .grad never aliases a gradient someone else holds") {
  // add hands one gradient tensor to both inputs: each .grad gets its own storage.
  Tensor a = ones({3}).requires_grad_(), b = ones({3}).requires_grad_();
  (a + b).backward(full({3}, 2.0));
  REQUIRE(a.grad().defined());
  REQUIRE(b.grad().defined());
  CHECK(a.grad().data_ptr() != b.grad().data_ptr());
  a.grad().add_(ones({3}));
  CHECK(b.grad().sum().item<float>() == 6.0f);
  // The seed the caller passed is still the caller's.
  Tensor x = ones({2}).requires_grad_();
  Tensor seed = full({2}, 3.0);
  x.backward(seed);
  CHECK(x.grad().data_ptr() != seed.data_ptr());
  // A gradient nobody else sees (mul's freshly made one) becomes .grad without a copy: the
  // values are right either way.
  Tensor y = ones({2}).requires_grad_();
  (y * 5.0).sum().backward();
  CHECK(y.grad().sum().item<float>() == 10.0f);
}

TEST_CASE("autograd: a first-order backward adds into .grad in place when nothing else sees it") {
  // As PyTorch's `grad += new_grad`: .grad keeps its memory across steps (a CUDA graph's captured
  // optimizer step reads it there), and the values are the sum.
  Tensor w = ones({3}).requires_grad_();
  (w * 2.0).sum().backward();
  const void* first = w.grad().data_ptr();
  (w * 3.0).sum().backward();
  CHECK(w.grad().data_ptr() == first);
  CHECK(w.grad().sum().item<float>() == 15.0f);
  // Zeroed in place between steps, as an optimizer's zero_grad(false) does: still the same memory.
  w.grad().zero_();
  (w * 4.0).sum().backward();
  CHECK(w.grad().data_ptr() == first);
  CHECK(w.grad().sum().item<float>() == 12.0f);
  // A handle the caller keeps sees .grad as it was: the sum then goes to new memory.
  const Tensor kept = w.grad();
  (w * 1.0).sum().backward();
  CHECK(w.grad().data_ptr() != first);
  CHECK(kept.sum().item<float>() == 12.0f);
  CHECK(w.grad().sum().item<float>() == 15.0f);
  // Building a graph (create_graph): out of place, so the old .grad's history is left alone.
  Tensor x = ones({2}).requires_grad_();
  (x * x).sum().backward({}, /*retain_graph=*/false, /*create_graph=*/true);
  const void* made = x.grad().data_ptr();
  (x * x).sum().backward({}, false, true);
  CHECK(x.grad().data_ptr() != made);
  CHECK(x.grad().sum().item<float>() == 8.0f);
  // x.grad's history saves x: the reference cycle create_graph makes (as in PyTorch) is broken here.
  x.set_grad(Tensor());
}

TEST_CASE("autograd: a weight's gradient made through transposed views becomes .grad without a copy") {
  // linear's weight enters the product as w.t(): its gradient is mm(g.t(), x) seen through two
  // transposes, a view whose base only that view holds. .grad takes the storage, as PyTorch's
  // AccumulateGrad steals it, and the values are those of a plain product.
  Tensor w = randn({4, 3}).requires_grad_(), b = randn({4}).requires_grad_();
  const Tensor x = randn({5, 3});
  const void* arriving = nullptr;
  w.register_hook([&](const Tensor& g) {
    arriving = g.data_ptr();
    return Tensor();
  });
  const Tensor g = randn({5, 4});
  linear(x, w, b).backward(g);
  REQUIRE(w.grad().defined());
  CHECK(w.grad().data_ptr() == arriving);
  CHECK(w.grad().is_contiguous());
  CHECK((w.grad() - g.t().mm(x)).abs().max().item<float>() <= 1e-5f);
  // .grad is a tensor of its own: writing into it leaves the next step's gradient alone.
  w.grad().zero_();
  w.set_grad({});
  linear(x, w, b).backward(g);
  CHECK((w.grad() - g.t().mm(x)).abs().max().item<float>() <= 1e-5f);
}
