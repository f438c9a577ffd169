// gradcheck and gradgradcheck over the operators with derivative formulas, on random fp64
// inputs including broadcast and non-contiguous ones; and a check that gradcheck can fail.
#include <doctest/doctest.h>

#include "anatomy/anatomy.h"
#include "gradcheck_test_util.h"

using namespace anatomy;
using namespace anatomy::gradcheck_test;
using autograd::GradcheckFn;

TEST_CASE("gradcheck: binary arithmetic with broadcasting, alpha and non-contiguous inputs") {
  check_both("add", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{add(x[0], x[1], 2)}; },
             {input({3, 1}), input({4})});
  check_both("sub", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{sub(x[0], x[1], 3)}; },
             {transposed_input(2, 3), input({3})});
  check_both("mul", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0] * x[1]}; },
             {input({2, 3}), transposed_input(2, 3)});
  check_both("div", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0] / x[1]}; },
             {input({2, 3}), positive_input({3})});
  check_both("in-place mul_ on a non-leaf",
             [](const std::vector<Tensor>& x) {
               Tensor a = x[0] * 1;
               a.mul_(x[1]);
               return std::vector<Tensor>{a};
             },
             {input({2, 2}), input({2, 2})});
}

TEST_CASE("gradcheck: unary operators") {
  check_both("neg", one([](const Tensor& t) { return neg(t); }), {input({4})});
  check_both("exp", one([](const Tensor& t) { return exp(t); }), {transposed_input(2, 3)});
  check_both("log", one([](const Tensor& t) { return log(t); }), {positive_input({5})});
  check_both("tanh", one([](const Tensor& t) { return tanh(t); }), {input({2, 3})});
  check_both("sigmoid", one([](const Tensor& t) { return sigmoid(t); }), {input({3})});
  check_both("sqrt", one([](const Tensor& t) { return sqrt(t); }), {positive_input({4})});
  check_both("sin", one([](const Tensor& t) { return sin(t); }), {input({3})});
  check_both("cos", one([](const Tensor& t) { return cos(t); }), {input({3})});
  check_both("reciprocal", one([](const Tensor& t) { return reciprocal(t); }), {positive_input({3})});
  // relu and abs: first derivatives only away from their kink.
  CHECK(autograd::gradcheck_report(one([](const Tensor& t) { return relu(t); }), {positive_input({4})}) == "");
  CHECK(autograd::gradcheck_report(one([](const Tensor& t) { return abs(t); }), {positive_input({4})}) == "");
}

TEST_CASE("gradcheck: sum and mean, over all dims and over dim lists with and without keepdim") {
  check_both("sum", one([](const Tensor& t) { return t.sum(); }), {input({2, 3})});
  check_both("sum dims", one([](const Tensor& t) { return t.sum({0, 2}); }), {input({2, 3, 2})});
  check_both("sum keepdim", one([](const Tensor& t) { return t.sum({-1}, true); }), {transposed_input(3, 2)});
  check_both("mean", one([](const Tensor& t) { return t.mean(); }), {input({4})});
  check_both("mean dims", one([](const Tensor& t) { return t.mean({1}); }), {input({2, 3})});
}

TEST_CASE("gradcheck: mm, bmm, addmm, _addmm_activation, and matmul/linear through them") {
  check_both("mm", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].mm(x[1])}; },
             {input({2, 3}), transposed_input(3, 2)});
  check_both("bmm", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].bmm(x[1])}; },
             {input({2, 2, 3}), input({2, 3, 2})});
  check_both("addmm", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{addmm(x[0], x[1], x[2], 0.5, 2)}; },
             {input({2}), input({3, 2}), input({2, 2})});
  check_both("matmul broadcast", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].matmul(x[1])}; },
             {input({2, 2, 3}), input({3, 2})});
  check_both("linear", [](const std::vector<Tensor>& x) { return std::vector<Tensor>{linear(x[0], x[1], x[2])}; },
             {input({4, 3}), input({2, 3}), input({2})});
  for (bool use_gelu : {false, true}) {
    check_both(use_gelu ? "_addmm_activation gelu" : "_addmm_activation relu",
               [use_gelu](const std::vector<Tensor>& x) {
                 return std::vector<Tensor>{_addmm_activation(x[0], x[1], x[2], 0.5, 2, use_gelu)};
               },
               {input({2}), input({3, 2}), transposed_input(2, 2)});
  }
}

TEST_CASE("gradcheck: views map gradients back (view, transpose, permute, expand, squeeze, select, slice)") {
  check_both("view", one([](const Tensor& t) { return t.view({3, 2}); }), {input({2, 3})});
  check_both("transpose", one([](const Tensor& t) { return t.transpose(0, 2) * 1; }), {input({2, 1, 3})});
  check_both("permute", one([](const Tensor& t) { return t.permute({2, 0, 1}) * 1; }), {input({2, 3, 2})});
  check_both("expand", one([](const Tensor& t) { return t.expand({2, 3, 3}) * 1; }), {input({3, 1})});
  check_both("unsqueeze/squeeze", one([](const Tensor& t) { return t.unsqueeze(1).squeeze(1) * 2; }), {input({3})});
  check_both("select", one([](const Tensor& t) { return t.select(1, -1) * 1; }), {input({2, 3})});
  check_both("slice", one([](const Tensor& t) { return t.slice(1, 1, 3) * 1; }), {input({2, 4})});
  CHECK(autograd::gradcheck_report(one([](const Tensor& t) { return t.slice(0, 0, 5, 2) * 1; }), {input({5})}) == "");
  check_both("clone and pad", one([](const Tensor& t) {
               return constant_pad_nd(t.clone(), {1, 2}, 0);
             }),
             {input({2, 2})});
}

TEST_CASE("gradcheck: a wrong derivative is caught") {
  // x * x.detach() has derivative x, not 2x: compare against the true function 2x would fail,
  // so check that gradcheck flags a function whose graph under-counts.
  GradcheckFn wrong = [](const std::vector<Tensor>& x) {
    if (autograd::GradMode::is_enabled()) return std::vector<Tensor>{x[0] * x[0].detach()};
    return std::vector<Tensor>{x[0] * x[0]};
  };
  CHECK(autograd::gradcheck_report(wrong, {input({3})}) != "");
}

TEST_CASE("a cast's gradient comes back in the input's dtype") {
  // Finite differences cannot see through a cast to fp32 or bf16, so this checks the values.
  const auto values = [](const Tensor& t) {
    Tensor c = t.to(DType::Float64).contiguous();
    return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  };
  for (DType low : {DType::Float32, DType::Float16, DType::BFloat16}) {
    INFO(name(low));
    Tensor x = tensor({0.25, -1.5, 3.0}, DType::Float64).requires_grad_();
    (x.to(low) * 2).sum().backward();
    REQUIRE(x.grad().defined());
    CHECK(x.grad().dtype() == DType::Float64);
    CHECK(values(x.grad()) == std::vector<double>{2, 2, 2});
  }
  Tensor h = tensor({1.0, 2.0}, DType::Float16).requires_grad_();
  (h.to(DType::Float64) * h.to(DType::Float64)).sum().backward();
  CHECK(h.grad().dtype() == DType::Float16);
  CHECK(values(h.grad()) == std::vector<double>{2, 4});
}
