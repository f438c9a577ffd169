// The derivatives of slices with a step (empty ones included, and their double backward) and of
// unfold, whose windows may overlap.
#include <doctest/doctest.h>

#include "../core/test_util.h"
#include "gradcheck_test_util.h"

using namespace anatomy;
using namespace anatomy::gradcheck_test;
using anatomy_test::D;

TEST_CASE("slice backward: an empty slice with a step gives zeros, wherever it starts") {
  for (auto [start, end, step] : {std::array<int64_t, 3>{0, 0, 3}, {5, 2, 2}, {1, 1, 2}, {7, 9, 4}}) {
    INFO("slice(0, ", start, ", ", end, ", ", step, ")");
    Tensor x = ones({3}, kF64).requires_grad_();
    x.slice(0, start, end, step).sum().backward();
    REQUIRE(x.grad().defined());
    CHECK(values(x.grad()) == D{0, 0, 0});
  }
}

TEST_CASE("slice backward: a step spreads the gradient to every step-th element") {
  Tensor x = ones({7}, kF64).requires_grad_();
  (x.slice(0, 1, 7, 3) * arange(1, 3, 1, DType::Float64)).sum().backward();
  CHECK(values(x.grad()) == D{0, 1, 0, 0, 2, 0, 0});
  Tensor y = ones({2, 5}, kF64).requires_grad_();
  y.slice(1, -4, std::nullopt, 2).sum().backward();
  CHECK(values(y.grad()) == D{0, 1, 0, 1, 0, 0, 1, 0, 1, 0});
}

TEST_CASE("slice with a step: first and second derivatives through ops that read a strided input") {
  check_both("pow of a step-2 slice", one([](const Tensor& x) { return x.slice(1, 0, 5, 2).pow(3); }), {input({3, 5})});
  check_both("sin of a step-3 slice of a column", one([](const Tensor& x) { return x.slice(0, 1, 6, 3).sin(); }),
             {input({6, 2})});
  check_both("log_softmax over a strided slice",
             one([](const Tensor& x) { return x.slice(1, 0, 6, 2).log_softmax(1); }), {input({2, 6})});
  check_both("matmul of a strided slice",
             two([](const Tensor& a, const Tensor& b) { return a.slice(0, 0, 4, 2).matmul(b); }),
             {input({4, 3}), input({3, 2})});
}

TEST_CASE("unfold records its derivative: overlapping windows add up") {
  Tensor x = ones({4}, kF64).requires_grad_();
  ((x * x).sum() + x.unfold(0, 2, 1).sum()).backward();
  CHECK(values(x.grad()) == D{3, 4, 4, 3});
  Tensor y = ones({4}, kF64).requires_grad_();
  Tensor windows = y.unfold(0, 3, 1);
  CHECK(windows.requires_grad());
  REQUIRE(windows.grad_fn() != nullptr);
  CHECK(windows.grad_fn()->name() == "UnfoldBackward0");
}

TEST_CASE("unfold: gradcheck and gradgradcheck, steps below, at and above the window size") {
  check_both("unfold(1, 2, 1)", one([](const Tensor& x) { return x.unfold(1, 2, 1) * x.unfold(1, 2, 1); }),
             {input({2, 5})});
  check_both("unfold(0, 2, 2)", one([](const Tensor& x) { return x.unfold(0, 2, 2).exp(); }), {input({4, 3})});
  check_both("unfold(0, 1, 3) of a transposed input", one([](const Tensor& x) { return x.unfold(0, 1, 3).pow(2); }),
             {transposed_input(5, 2)});
}

TEST_CASE("constant_pad_nd backward: crops and zero-pads, with pads at the ends of int64") {
  check_both("pads of both signs", one([](const Tensor& x) {
               return constant_pad_nd(x, {-1, 2, 1, -2}, 0).pow(2);
             }),
             {input({4, 5})});
  check_both("a pad that crops everything", one([](const Tensor& x) {
               return constant_pad_nd(x, {-5, 1}, 0) + constant_pad_nd(x, {0, -3}, 0).sum();
             }),
             {input({2, 4})});
  // The forward's output is empty, with a first dim of INT64_MAX: the backward must not negate
  // or add the pads.
  Tensor x = ones({3, 4}, kF64).requires_grad_();
  constant_pad_nd(x, {-2, -2, -2, INT64_MAX - 1}, 0).sum().backward();
  CHECK(values(x.grad()) == std::vector<double>(12, 0.0));
}

TEST_CASE("roll backward: a shift of INT64_MIN is undone modulo the extent") {
  Tensor x = arange(0, 3, 1, DType::Float64).requires_grad_();
  const Tensor y = x.roll({INT64_MIN}, {});
  (y * arange(1, 4, 1, DType::Float64)).sum().backward();
  // INT64_MIN % 3 == -2: y = x rolled by -2 = [x2, x0, x1], so x's gradient is [2, 3, 1].
  CHECK(values(y.detach()) == D{2, 0, 1});
  CHECK(values(x.grad()) == D{2, 3, 1});
}

TEST_CASE("scatter with a 0-dim src or index: src's gradient has src's shape") {
  Tensor src = full({}, 3.0, kF64).requires_grad_();
  const Tensor index = zeros({1}, TensorOptions().dtype(DType::Int64));
  (scatter(zeros({}, kF64), 0, index, src) * 5).sum().backward();
  CHECK(src.grad().dim() == 0);
  CHECK(src.grad().item<double>() == 5);

  Tensor wide = ones({2}, kF64).requires_grad_();
  (scatter_add(zeros({}, kF64), 0, zeros({}, TensorOptions().dtype(DType::Int64)), wide) * 4).sum().backward();
  CHECK(values(wide.grad()) == D{4, 0});
}
