// The activations' fused gradients on the CPU. threshold_backward and relu's backward: the rules
// the op table's samples do not pin down (where the comparison happens for fp16, an integer's
// truncated threshold, promotion of mixed dtypes), relu's and _addmm_activation's backward as one
// threshold_backward call, and the double backward through it (ThresholdBackwardBackward0).
// gelu_backward and gelu's backward: one gelu_backward call (gelu's and _addmm_activation's),
// equal to the operators' formula that a create_graph backward records (and gradgradchecks
// through), fp16 and bf16 computed in float and rounded once, the far tails without NaN, and an
// unknown approximation. The op table checks the values on its standard samples against fp64
// references, the bad inputs and gradcheck; tests/gpu/test_cuda_threshold_backward.cpp compares
// CUDA with the CPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../core/test_util.h"
#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

std::vector<double> values(const Tensor& t) {
  const Tensor host = t.to(DType::Float64).contiguous();
  const double* p = static_cast<const double*>(host.data_ptr());
  return std::vector<double>(p, p + host.numel());
}

Tensor doubles(std::vector<double> v, DType d) {
  const int64_t n = static_cast<int64_t>(v.size());
  return tensor(std::move(v), {n}, DType::Float64).to(d);
}

// The operators called at depth 0 while `f` runs (the formulas' calls, not the kernels' own).
template <typename F>
std::vector<std::string> top_level_calls(F f) {
  dispatch::Tracer tracer;
  f();
  std::vector<std::string> ops;
  for (const dispatch::TracedCall& c : tracer.calls()) {
    if (c.depth == 0) ops.push_back(c.op);
  }
  return ops;
}

bool calls(const std::vector<std::string>& ops, const std::string& op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace

TEST_CASE("threshold_backward: zero where self <= threshold, grad_output elsewhere, NaN self passes") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor g = doubles({1, 2, nan, 4, 5, 6}, DType::Float32);
  const Tensor x = doubles({-1, 0, -3, 0.5, nan, 2}, DType::Float32);
  const std::vector<double> got = values(threshold_backward(g, x, 0));
  // A NaN gradient where self <= 0 becomes 0; a NaN self compares false and passes its gradient.
  CHECK(got == std::vector<double>{0, 0, 0, 4, 5, 6});
  CHECK(values(threshold_backward(g, x, 0.5)) == std::vector<double>{0, 0, 0, 0, 5, 6});
}

TEST_CASE("threshold_backward: fp16 and bf16 compare in float, integers with the threshold truncated") {
  // fp16(0.1) is 0.0999755859375; 0.09997 rounds to it in fp16 but is below it in float.
  const Tensor x = full({3}, 0.1, DType::Float16);
  const Tensor g = ones({3}, DType::Float16);
  CHECK(values(threshold_backward(g, x, 0.09997)) == std::vector<double>{1, 1, 1});
  CHECK(values(threshold_backward(g.to(DType::BFloat16), x.to(DType::BFloat16), 0.0999)) ==
        std::vector<double>{1, 1, 1});
  // -0.5 becomes 0 for int32, so self 0 gives 0; 2.9 becomes 2.
  const Tensor xi = tensor({-1, 0, 1, 2, 3}).to(DType::Int32);
  const Tensor gi = tensor({10, 20, 30, 40, 50}).to(DType::Int32);
  CHECK(values(threshold_backward(gi, xi, -0.5)) == std::vector<double>{0, 0, 30, 40, 50});
  CHECK(values(threshold_backward(gi, xi, 2.9)) == std::vector<double>{0, 0, 0, 0, 50});
}

TEST_CASE("threshold_backward: grad_output and self promote together and broadcast") {
  const Tensor g = ones({2, 1}, DType::Float16);
  const Tensor x = doubles({-1.0, 1.0, 2.0}, DType::Float32);
  const Tensor r = threshold_backward(g, x, 0);
  CHECK(r.dtype() == DType::Float32);
  CHECK(r.sizes().vec() == std::vector<int64_t>{2, 3});
  CHECK(values(r) == std::vector<double>{0, 1, 1, 0, 1, 1});
  CHECK(threshold_backward(tensor({1, 2}), doubles({0.5, -0.5}, DType::Float32), 0).dtype() == DType::Float32);
  CHECK(threshold_backward(tensor({1, 2}).to(DType::Int8), tensor({1, 2}).to(DType::Int8), 1).dtype() == DType::Int8);
  CHECK_THROWS_AS(threshold_backward(ones({2}, DType::Bool), ones({2}, DType::Bool), 0), TypeError);
  CHECK_THROWS_AS(threshold_backward(ones({2, 3}), ones({4}), 0), ValueError);
  CHECK_THROWS_AS(threshold_backward(ones({2}, DType::UInt8), ones({2}, DType::UInt8), -1), ValueError);
  // fp16 compares in float: a threshold beyond fp16's range is allowed.
  CHECK(values(threshold_backward(ones({1}, DType::Float16), ones({1}, DType::Float16), 1e5)) ==
        std::vector<double>{0});
}

TEST_CASE("relu backward: one threshold_backward call, no comparison or where") {
  const Tensor x = randn({4, 5}).requires_grad_();
  const Tensor y = relu(x);
  const Tensor g = randn({4, 5});
  const std::vector<std::string> ops = top_level_calls([&] { y.backward(g); });
  CHECK(calls(ops, "aten::threshold_backward"));
  CHECK_FALSE(calls(ops, "aten::where.self"));
  CHECK_FALSE(calls(ops, "aten::gt.Tensor"));
  const std::vector<double> xv = values(x.detach()), gv = values(g), got = values(x.grad());
  for (size_t i = 0; i < xv.size(); ++i) CHECK(got[i] == (xv[i] > 0 ? gv[i] : 0.0));
}

TEST_CASE("relu backward: _addmm_activation's relu branch calls threshold_backward") {
  const Tensor bias = randn({5}).requires_grad_();
  const Tensor a = randn({3, 4}).requires_grad_(), b = randn({4, 5}).requires_grad_();
  const Tensor y = _addmm_activation(bias, a, b, 1, 1, false);
  const std::vector<std::string> ops = top_level_calls([&] { y.sum().backward(); });
  CHECK(calls(ops, "aten::threshold_backward"));
  CHECK_FALSE(calls(ops, "aten::where.self"));
  // The bias gradient counts the positive results of each column.
  const Tensor positive = (addmm(bias, a, b).detach() > 0).to(DType::Float32).sum({0});
  CHECK(values(bias.grad()) == values(positive));
}

TEST_CASE("relu backward: double backward goes through ThresholdBackwardBackward0") {
  const Tensor x = doubles({-1.5, 0.5, 2.0, -0.25}, DType::Float64).requires_grad_();
  const Tensor g = doubles({1.0, 2.0, 3.0, 4.0}, DType::Float64).requires_grad_();
  const Tensor y = relu(x);
  const Tensor gx = autograd::grad({y}, {x}, {g}, true, /*create_graph=*/true)[0];
  REQUIRE(gx.grad_fn() != nullptr);
  CHECK(gx.grad_fn()->name() == "ThresholdBackwardBackward0");
  // d(sum(gx * w))/dg = threshold_backward(w, relu(x), 0); the gradient with respect to x
  // through the saved result is zero (relu is piecewise linear).
  const Tensor w = doubles({5.0, 6.0, 7.0, 8.0}, DType::Float64);
  const std::vector<Tensor> second = autograd::grad({gx}, {g, x}, {w}, true, false, /*allow_unused=*/true);
  CHECK(values(second[0]) == std::vector<double>{0, 6, 7, 0});
  REQUIRE(second[1].defined());
  CHECK(values(second[1]) == std::vector<double>{0, 0, 0, 0});
}

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
  // Far out: the derivative is 0 and 1, with no NaN from an overflowing exponential or square.
  const double inf = std::numeric_limits<double>::infinity();
  for (const char* approximate : {"none", "tanh"}) {
    CAPTURE(approximate);
    CHECK(equal(gelu_backward(ones({6}), tensor({-inf, -1e30, -100.0, 100.0, 1e30, inf}), approximate),
                tensor({0.0, 0.0, 0.0, 1.0, 1.0, 1.0})));
  }
  EXPECT_ERROR(ValueError, gelu_backward(g, x, "sigmoid"), "gelu_backward", "'none' or 'tanh'", "sigmoid");
  EXPECT_ERROR(TypeError, gelu_backward(tensor({1, 2}), tensor({1, 2})), "gelu_backward");
  const Tensor leaf = x.detach().requires_grad_();
  EXPECT_ERROR(NotImplementedError, gelu_backward(g, leaf), "gelu_backward");
}
