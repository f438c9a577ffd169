// gradcheck and gradgradcheck of the element-wise formulas of derivatives_unary.cpp and
// derivatives_binary.cpp, on random fp64 inputs including broadcast and non-contiguous ones,
// plus the points where PyTorch fixes a convention (ties, zero gradients, masks).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "anatomy/anatomy.h"
#include "gradcheck_test_util.h"

using namespace anatomy;
using namespace anatomy::gradcheck_test;
using autograd::GradcheckFn;

namespace {

// The op applied in place to a non-leaf copy of the first input.
GradcheckFn in_place(std::function<void(const Tensor&, const std::vector<Tensor>&)> f) {
  return [f](const std::vector<Tensor>& x) {
    Tensor a = x[0] * 1;
    f(a, x);
    return std::vector<Tensor>{a};
  };
}

}  // namespace

TEST_CASE("gradcheck: exp2, expm1, log1p, log2, rsqrt, tan, erf") {
  check_both("exp2", one([](const Tensor& t) { return exp2(t); }), {transposed_input(2, 3)});
  check_both("expm1", one([](const Tensor& t) { return expm1(t); }), {input({4})});
  check_both("log1p", one([](const Tensor& t) { return log1p(t); }), {positive_input({4})});
  check_both("log2", one([](const Tensor& t) { return log2(t); }), {positive_input({2, 2})});
  check_both("rsqrt", one([](const Tensor& t) { return rsqrt(t); }), {positive_input({4})});
  check_both("tan", one([](const Tensor& t) { return tan(t); }), {uniform_input({4}, -0.5)});
  check_both("erf", one([](const Tensor& t) { return erf(t); }), {transposed_input(3, 2)});
  // Separately: exp2_ saves its result, which a second in-place op would modify (an error, as
  // in PyTorch).
  check_both("in-place exp2_", in_place([](const Tensor& a, const std::vector<Tensor>&) { a.exp2_(); }), {input({3})});
  check_both("in-place rsqrt_", in_place([](const Tensor& a, const std::vector<Tensor>&) { a.rsqrt_(); }),
             {positive_input({3})});
  check_both("in-place log1p_ and tan_", in_place([](const Tensor& a, const std::vector<Tensor>&) {
               a.log1p_();
               a.tan_();
             }),
             {positive_input({3})});
}

TEST_CASE("gradcheck: gelu (both approximations), silu, softplus") {
  check_both("gelu none", one([](const Tensor& t) { return gelu(t); }), {input({5})});
  check_both("gelu tanh", one([](const Tensor& t) { return gelu(t, "tanh"); }), {transposed_input(2, 3)});
  check_both("gelu_ tanh", in_place([](const Tensor& a, const std::vector<Tensor>&) { gelu_(a, "tanh"); }),
             {input({4})});
  check_both("silu", one([](const Tensor& t) { return silu(t); }), {input({2, 3})});
  check_both("silu_", in_place([](const Tensor& a, const std::vector<Tensor>&) { a.silu_(); }), {input({3})});
  check_both("softplus", one([](const Tensor& t) { return softplus(t); }), {input({4})});
  // beta * x above the threshold: the linear branch, gradient 1.
  check_both("softplus beta threshold", one([](const Tensor& t) { return softplus(t * 3, 2, 1.5); }), {input({6})});
}

TEST_CASE("gradcheck: the rounding operators have a zero gradient") {
  const std::vector<std::pair<const char*, Tensor (*)(const Tensor&)>> ops = {
      {"sign", [](const Tensor& t) { return anatomy::sign(t); }},
      {"floor", [](const Tensor& t) { return anatomy::floor(t); }},
      {"ceil", [](const Tensor& t) { return anatomy::ceil(t); }},
      {"round", [](const Tensor& t) { return anatomy::round(t); }},
      {"trunc", [](const Tensor& t) { return anatomy::trunc(t); }}};
  for (const auto& [what, f] : ops) {
    // Away from the jumps, where finite differences see a flat function.
    Tensor x = tensor({0.3, 1.7, -2.4, 3.2}, kF64).requires_grad_();
    CHECK(grad_of_sum(x, f(x)) == std::vector<double>{0, 0, 0, 0});
    check_both(what, one([f](const Tensor& t) { return f(t) + t; }), {x});
  }
  Tensor y = tensor({0.3, -1.2}, kF64).requires_grad_();
  Tensor a = y * 1;
  a.floor_();
  CHECK(grad_of_sum(y, a) == std::vector<double>{0, 0});
}

TEST_CASE("gradcheck: clamp with Scalar and Tensor bounds, and nan_to_num") {
  const std::optional<Scalar> lo(-0.5), hi(0.5), none;
  Tensor x = tensor({-1.3, -0.2, 0.1, 0.9, 0.45}, kF64).requires_grad_();
  CHECK(grad_of_sum(x, clamp(x, lo, hi)) == std::vector<double>{0, 1, 1, 0, 1});
  check_both("clamp min max", one([&](const Tensor& t) { return clamp(t, lo, hi); }), {x});
  check_both("clamp min", one([&](const Tensor& t) { return clamp(t, lo, none); }), {x});
  check_both("clamp max", one([&](const Tensor& t) { return clamp(t, none, hi); }), {x});
  check_both("clamp_", in_place([&](const Tensor& a, const std::vector<Tensor>&) { a.clamp_(lo, hi); }), {x});
  // Tensor bounds broadcast against self; where min > max the result is max.
  Tensor lo_t = tensor({-0.5, -0.3, 0.3, 1.0, 0.6}, kF64).requires_grad_();
  Tensor hi_t = tensor({0.5}, kF64).requires_grad_();
  check_both("clamp.Tensor",
             [](const std::vector<Tensor>& v) {
               return std::vector<Tensor>{clamp(v[0], std::optional<Tensor>(v[1]), std::optional<Tensor>(v[2]))};
             },
             {x, lo_t, hi_t});
  check_both("clamp.Tensor min only",
             [](const std::vector<Tensor>& v) {
               return std::vector<Tensor>{clamp(v[0], std::optional<Tensor>(v[1]), std::optional<Tensor>())};
             },
             {x, lo_t});
  check_both("clamp.Tensor max only",
             [](const std::vector<Tensor>& v) {
               return std::vector<Tensor>{clamp(v[0], std::optional<Tensor>(), std::optional<Tensor>(v[1]))};
             },
             {x, hi_t});
  // x gets the gradient where min <= x <= max, min where x < min < max, max where x > max or
  // min > max.
  Tensor xs = x.detach().requires_grad_(), los = lo_t.detach().requires_grad_(), his = hi_t.detach().requires_grad_();
  clamp(xs, std::optional<Tensor>(los), std::optional<Tensor>(his)).sum().backward();
  CHECK(std::vector<double>(xs.grad().data_ptr<double>(), xs.grad().data_ptr<double>() + 5) ==
        std::vector<double>{0, 1, 0, 0, 0});
  CHECK(std::vector<double>(los.grad().data_ptr<double>(), los.grad().data_ptr<double>() + 5) ==
        std::vector<double>{1, 0, 1, 0, 0});
  CHECK(his.grad().data_ptr<double>()[0] == 2);

  check_both("nan_to_num", one([](const Tensor& t) { return t.nan_to_num(); }), {input({4})});
  const double inf = std::numeric_limits<double>::infinity();
  Tensor z = tensor({1.0, inf, -inf, std::nan("")}, kF64).requires_grad_();
  CHECK(grad_of_sum(z, z.nan_to_num()) == std::vector<double>{1, 0, 0, 0});
}

TEST_CASE("gradcheck: pow with Tensor and Scalar operands") {
  check_both("pow tensor tensor", two([](const Tensor& a, const Tensor& b) { return pow(a, b); }),
             {positive_input({2, 3}), input({3})});
  check_both("pow scalar exponent", one([](const Tensor& t) { return t.pow(3); }), {transposed_input(2, 2)});
  check_both("pow scalar base", one([](const Tensor& t) { return pow(Scalar(2.5), t); }), {input({3})});
  check_both("pow_", in_place([](const Tensor& a, const std::vector<Tensor>& v) { a.pow_(v[1]); }),
             {positive_input({3}), input({3})});
  // A zero exponent gives the base zero gradient even at 0; 0^e (e >= 0) gives the exponent none.
  Tensor base = tensor({0.0, 2.0}, kF64).requires_grad_();
  Tensor e = tensor({0.0, 2.0}, kF64).requires_grad_();
  pow(base, e).sum().backward();
  CHECK(base.grad().data_ptr<double>()[0] == 0);
  CHECK(base.grad().data_ptr<double>()[1] == doctest::Approx(4.0));
  CHECK(e.grad().data_ptr<double>()[0] == 0);
}

TEST_CASE("gradcheck: maximum and minimum split ties evenly, atan2") {
  check_both("maximum", two([](const Tensor& a, const Tensor& b) { return maximum(a, b); }),
             {input({2, 3}), input({3})});
  check_both("minimum", two([](const Tensor& a, const Tensor& b) { return minimum(a, b); }),
             {transposed_input(2, 3), input({2, 1})});
  Tensor a = tensor({1.0, 2.0, 5.0}, kF64).requires_grad_();
  Tensor b = tensor({1.0, 3.0, 4.0}, kF64).requires_grad_();
  maximum(a, b).sum().backward();
  CHECK(std::vector<double>(a.grad().data_ptr<double>(), a.grad().data_ptr<double>() + 3) ==
        std::vector<double>{0.5, 0, 1});
  CHECK(std::vector<double>(b.grad().data_ptr<double>(), b.grad().data_ptr<double>() + 3) ==
        std::vector<double>{0.5, 1, 0});
  Tensor c = tensor({1.0, 2.0}, kF64).requires_grad_();
  CHECK(grad_of_sum(c, minimum(c, tensor({1.0, 0.0}, kF64))) == std::vector<double>{0.5, 0});

  check_both("atan2", two([](const Tensor& y, const Tensor& x) { return atan2(y, x); }),
             {input({2, 3}), transposed_input(2, 3)});
  check_both("atan2_", in_place([](const Tensor& y, const std::vector<Tensor>& v) { y.atan2_(v[1]); }),
             {input({3}), positive_input({3})});
}

TEST_CASE("gradcheck: where, lerp and masked_fill") {
  Tensor cond = tensor({1, 0, 1}, TensorOptions().dtype(DType::Int64)).to(DType::Bool);
  check_both("where", two([&](const Tensor& a, const Tensor& b) { return where(cond, a, b); }),
             {input({2, 3}), input({3})});
  check_both("where scalar other", one([&](const Tensor& a) { return where(cond, a, Scalar(2.0)); }),
             {transposed_input(2, 3)});

  check_both("lerp scalar", two([](const Tensor& a, const Tensor& b) { return lerp(a, b, Scalar(0.3)); }),
             {input({2, 3}), input({3})});
  check_both("lerp tensor", [](const std::vector<Tensor>& v) { return std::vector<Tensor>{lerp(v[0], v[1], v[2])}; },
             {input({3}), transposed_input(2, 3), input({2, 1})});
  check_both("lerp_ scalar", in_place([](const Tensor& a, const std::vector<Tensor>& v) { lerp_(a, v[1], 0.7); }),
             {input({3}), input({3})});
  check_both("lerp_ tensor", in_place([](const Tensor& a, const std::vector<Tensor>& v) { lerp_(a, v[1], v[2]); }),
             {input({3}), input({3}), input({3})});

  Tensor mask = tensor({0, 1, 1}, TensorOptions().dtype(DType::Int64)).to(DType::Bool);
  check_both("masked_fill", one([&](const Tensor& t) { return t.masked_fill(mask, 2.0); }), {input({2, 3})});
  // self broadcasts up to the mask's shape: its gradient sums back.
  check_both("masked_fill broadcast self", one([&](const Tensor& t) { return t.masked_fill(mask, -1.0); }),
             {input({2, 1})});
  check_both("masked_fill_", in_place([&](const Tensor& a, const std::vector<Tensor>&) { a.masked_fill_(mask, 0.0); }),
             {transposed_input(2, 3)});
  Tensor x = tensor({1.0, 2.0, 3.0}, kF64).requires_grad_();
  CHECK(grad_of_sum(x, x.masked_fill(mask, 0.0)) == std::vector<double>{1, 0, 0});
}

TEST_CASE("gradcheck: remainder, fmod, div with a rounding mode") {
  check_both("remainder", two([](const Tensor& a, const Tensor& b) { return remainder(a, b); }),
             {input({2, 3}), positive_input({3})});
  check_both("fmod", two([](const Tensor& a, const Tensor& b) { return fmod(a, b); }),
             {transposed_input(2, 3), positive_input({3})});
  check_both("remainder_", in_place([](const Tensor& a, const std::vector<Tensor>& v) { a.remainder_(v[1]); }),
             {input({3}), positive_input({3})});
  Tensor x = tensor({5.5, -5.5}, kF64).requires_grad_();
  Tensor d = tensor({2.0, 2.0}, kF64).requires_grad_();
  remainder(x, d).sum().backward();
  CHECK(std::vector<double>(x.grad().data_ptr<double>(), x.grad().data_ptr<double>() + 2) == std::vector<double>{1, 1});
  // -floor(x / d): -2 and 3.
  CHECK(std::vector<double>(d.grad().data_ptr<double>(), d.grad().data_ptr<double>() + 2) ==
        std::vector<double>{-2, 3});

  check_both("div no rounding mode", two([](const Tensor& a, const Tensor& b) { return div(a, b, std::nullopt); }),
             {input({2, 3}), positive_input({3})});
  for (const char* mode : {"floor", "trunc"}) {
    Tensor a = input({3}), b = positive_input({3});
    div(a, b, mode).sum().backward();
    CHECK(std::vector<double>(a.grad().data_ptr<double>(), a.grad().data_ptr<double>() + 3) ==
          std::vector<double>{0, 0, 0});
    CHECK(std::vector<double>(b.grad().data_ptr<double>(), b.grad().data_ptr<double>() + 3) ==
          std::vector<double>{0, 0, 0});
  }
}

TEST_CASE("autograd: PyTorch's node names for the element-wise formulas") {
  Tensor x = input({3});
  CHECK(x.exp2().grad_fn()->name() == "Exp2Backward0");
  CHECK(x.gelu().grad_fn()->name() == "GeluBackward0");
  CHECK(clamp(x, std::optional<Scalar>(0), std::optional<Scalar>()).grad_fn()->name() == "ClampBackward1");
  CHECK(pow(x, x).grad_fn()->name() == "PowBackward1");
  CHECK(maximum(x, x).grad_fn()->name() == "MaximumBackward0");
  CHECK(where(x > 0, x, x).grad_fn()->name() == "WhereBackward0");
  CHECK(x.masked_fill(x > 0, 1).grad_fn()->name() == "MaskedFillBackward0");
}
