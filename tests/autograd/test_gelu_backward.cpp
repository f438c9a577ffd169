// gelu_backward and gelu's backward on the CPU: gelu's and _addmm_activation's backward as one
// gelu_backward call, equal to the operators' formula that a create_graph backward records (and
// gradchecks through), fp16 and bf16 computed in float and rounded once, and the bad inputs the
// op table's error samples do not carry (an unknown approximation). The op table checks the
// values on its standard samples against an fp64 reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "../core/test_util.h"
#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

std::vector<std::string> top_level_calls(const std::function<void()>& f) {
  dispatch::Tracer tracer;
  f();
  std::vector<std::string> ops;
  for (const dispatch::TracedCall& c : tracer.calls()) {
    if (c.depth == 0) ops.push_back(c.op);
  }
  return ops;
}

}  // namespace

TEST_CASE("gelu backward: one gelu_backward call, equal to the formula a create_graph backward records") {
  manual_seed(41);
  for (const std::string approximate : {"none", "tanh"}) {
    CAPTURE(approximate);
    const Tensor x = (randn({6, 7}, DType::Float64) * 3).requires_grad_();
    const Tensor g = randn({6, 7}, DType::Float64);
    const Tensor y = gelu(x, approximate);
    const std::vector<std::string> ops = top_level_calls([&] { y.backward(g); });
    CHECK(ops == std::vector<std::string>{"aten::gelu_backward"});
    const Tensor recorded = autograd::grad({gelu(x, approximate)}, {x}, {g}, true, true)[0];
    CHECK(recorded.requires_grad());
    CHECK(allclose(x.grad(), recorded.detach(), 1e-13, 1e-13));
    // The second derivative goes through the recorded formula.
    CHECK(autograd::gradgradcheck(
        [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{gelu(in[0], approximate)}; }, {x}));
  }
}

TEST_CASE("gelu backward: _addmm_activation's gelu branch calls gelu_backward") {
  manual_seed(42);
  const Tensor b = randn({5}).requires_grad_(), a = randn({3, 4}).requires_grad_(), w = randn({4, 5});
  const Tensor y = _addmm_activation(b, a, w, 1, 1, true);
  const std::vector<std::string> ops = top_level_calls([&] { y.sum().backward(); });
  CHECK(std::find(ops.begin(), ops.end(), "aten::gelu_backward") != ops.end());
  const Tensor want = autograd::grad({gelu(addmm(b, a, w), "tanh").sum()}, {a})[0];
  CHECK(allclose(a.grad(), want, 1e-5, 1e-6));
}

TEST_CASE("gelu_backward: fp16 and bf16 in float, rounded once; bad approximation and dtypes refused") {
  const Tensor x = tensor({-3.0, -0.5, 0.0, 0.25, 1.0, 4.0}), g = tensor({1.0, -2.0, 0.5, 3.0, 1.0, -1.0});
  for (DType d : {DType::Float16, DType::BFloat16}) {
    const Tensor got = gelu_backward(g.to(d), x.to(d), "tanh");
    CHECK(got.dtype() == d);
    // The float computation on the rounded inputs, rounded once.
    const Tensor want = gelu_backward(g.to(d).to(DType::Float32), x.to(d).to(DType::Float32), "tanh").to(d);
    CHECK(equal(got, want));
  }
  CHECK(gelu_backward(g, x.to(DType::Float64)).dtype() == DType::Float64);  // promotes as a binary op
  // Far out: the derivative is 0 and 1, with no NaN from an overflowing exponential.
  for (const char* approximate : {"none", "tanh"}) {
    CHECK(equal(gelu_backward(ones({2}), tensor({-100.0, 100.0}), approximate), tensor({0.0, 1.0})));
  }
  EXPECT_ERROR(ValueError, gelu_backward(g, x, "sigmoid"), "gelu_backward", "'none' or 'tanh'", "sigmoid");
  EXPECT_ERROR(TypeError, gelu_backward(tensor({1, 2}), tensor({1, 2})), "gelu_backward");
  const Tensor leaf = x.detach().requires_grad_();
  EXPECT_ERROR(NotImplementedError, gelu_backward(g, leaf), "gelu_backward");
}
