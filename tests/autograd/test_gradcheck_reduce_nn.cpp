// gradcheck and gradgradcheck of the reduction and neural-network formulas of
// derivatives_reduce.cpp and derivatives_nn.cpp, on random fp64 inputs (distinct values where
// ties would be a kink), plus PyTorch's conventions: prod at zeros, ties of amax/max split
// evenly, max.dim's gradient at its index, dropout's mask.
#include <doctest/doctest.h>

#include <cmath>

#include "anatomy/anatomy.h"
#include "gradcheck_test_util.h"

using namespace anatomy;
using namespace anatomy::gradcheck_test;
using autograd::GradcheckFn;

namespace {

Tensor leaf(std::initializer_list<double> values) { return tensor(values, kF64).requires_grad_(); }

}  // namespace

TEST_CASE("gradcheck: prod, including inputs with one and with two zeros") {
  check_both("prod", one([](const Tensor& t) { return t.prod(); }), {input({2, 3})});
  check_both("prod dims", one([](const Tensor& t) { return t.prod({1}); }), {transposed_input(2, 3)});
  check_both("prod keepdim", one([](const Tensor& t) { return t.prod({0, 2}, true); }), {input({2, 2, 2})});
  // prod is multilinear, so finite differences are exact at zeros: the zero cases' first and
  // second derivatives are checked too.
  check_both("prod one zero", one([](const Tensor& t) { return t.prod(); }), {leaf({2, 0, 3, -1})});
  check_both("prod two zeros", one([](const Tensor& t) { return t.prod(); }), {leaf({2, 0, 3, 0})});
  check_both("prod rows with zeros", one([](const Tensor& t) { return t.prod({1}); }),
             {tensor({2.0, 0.0, 3.0, 1.5, -2.0, 0.5, 0.0, 0.0, 4.0}, kF64).view({3, 3}).requires_grad_()});
  Tensor x = leaf({2, 0, 3});
  CHECK(grad_of_sum(x, x.prod()) == std::vector<double>{0, 6, 0});
}

TEST_CASE("gradcheck: amax, amin, max, min split ties evenly") {
  check_both("amax", one([](const Tensor& t) { return t.amax({1}); }), {input({2, 3})});
  check_both("amin keepdim", one([](const Tensor& t) { return t.amin({0}, true); }), {transposed_input(3, 2)});
  check_both("amax all", one([](const Tensor& t) { return t.amax(); }), {input({2, 2})});
  check_both("max", one([](const Tensor& t) { return t.max(); }), {input({4})});
  check_both("min", one([](const Tensor& t) { return t.min(); }), {transposed_input(2, 3)});
  Tensor x = leaf({1, 3, 3, 2});
  CHECK(grad_of_sum(x, x.amax()) == std::vector<double>{0, 0.5, 0.5, 0});
  Tensor y = leaf({1, 3, 3, 1});
  CHECK(grad_of_sum(y, y.min()) == std::vector<double>{0.5, 0, 0, 0.5});
}

TEST_CASE("gradcheck: reductions over an empty dim list are element-wise") {
  check_both("sum no dims", one([](const Tensor& t) { return t.sum({}, false); }), {input({2, 3})});
  check_both("mean no dims keepdim", one([](const Tensor& t) { return t.mean({}, true); }), {transposed_input(2, 3)});
  check_both("prod no dims", one([](const Tensor& t) { return t.prod({}, false); }), {input({2, 3})});
  check_both("amax no dims", one([](const Tensor& t) { return t.amax({}); }), {input({2, 3})});
  check_both("norm 3 no dims", one([](const Tensor& t) { return t.norm(3, {}); }), {input({2, 3})});
  check_both("logsumexp no dims", one([](const Tensor& t) { return t.logsumexp({}); }), {input({2, 3})});
  check_both("var no dims correction 0", one([](const Tensor& t) { return t.var({}, 0); }), {input({2, 3})});
}

TEST_CASE("gradcheck: max.dim and min.dim send the gradient to the index") {
  check_both("max.dim", one([](const Tensor& t) { return std::get<0>(t.max(1)); }), {input({2, 3})});
  check_both("max.dim keepdim", one([](const Tensor& t) { return std::get<0>(t.max(0, true)); }),
             {transposed_input(3, 2)});
  check_both("min.dim", one([](const Tensor& t) { return std::get<0>(t.min(-1)); }), {input({2, 2, 3})});
  Tensor x = tensor({1.0, 5.0, 2.0, 7.0, 0.0, 3.0}, kF64).view({2, 3}).detach().requires_grad_();
  auto [v, i] = x.max(1);
  CHECK(!i.requires_grad());
  CHECK(v.grad_fn()->name() == "MaxBackward0");
  v.sum().backward();
  CHECK(values(x.grad()) == std::vector<double>{0, 1, 0, 1, 0, 0});
}

TEST_CASE("gradcheck: var, std, norm, logsumexp") {
  check_both("var", one([](const Tensor& t) { return t.var(); }), {input({2, 3})});
  check_both("var dims correction 0", one([](const Tensor& t) { return t.var({1}, 0); }), {transposed_input(2, 3)});
  check_both("std", one([](const Tensor& t) { return t.std(); }), {input({5})});
  check_both("std keepdim", one([](const Tensor& t) { return t.std({0}, 1, true); }), {input({3, 2})});
  check_both("norm 2", one([](const Tensor& t) { return t.norm(); }), {input({2, 3})});
  check_both("norm 1", one([](const Tensor& t) { return t.norm(1, {1}); }), {transposed_input(2, 3)});
  check_both("norm inf", one([](const Tensor& t) { return t.norm(INFINITY, {0}, true); }), {input({3, 2})});
  check_both("norm 3", one([](const Tensor& t) { return t.norm(3, {1}); }), {input({2, 3})});
  check_both("norm 1.5", one([](const Tensor& t) { return t.norm(1.5); }), {input({4})});
  check_both("logsumexp", one([](const Tensor& t) { return t.logsumexp({1}); }), {input({2, 3})});
  check_both("logsumexp keepdim", one([](const Tensor& t) {
               return t.logsumexp({0, 1}, true);
             }),
             {transposed_input(2, 3)});
  // A zero norm (p = 2) or std has a zero gradient rather than NaN.
  Tensor z = leaf({0, 0, 0});
  CHECK(grad_of_sum(z, z.norm()) == std::vector<double>{0, 0, 0});
  Tensor c = leaf({1, 1, 1});
  CHECK(grad_of_sum(c, c.std()) == std::vector<double>{0, 0, 0});
}

TEST_CASE("gradcheck: softmax and log_softmax") {
  check_both("softmax", one([](const Tensor& t) { return t.softmax(1); }), {input({2, 3})});
  check_both("softmax dim 0", one([](const Tensor& t) { return t.softmax(0); }), {transposed_input(3, 2)});
  check_both("log_softmax", one([](const Tensor& t) { return t.log_softmax(-1); }), {input({2, 3})});
  // With dtype, the result is fp64 and the gradient comes back in the input's fp32.
  Tensor x = randn({2, 3}).requires_grad_();
  Tensor y = x.softmax(1, DType::Float64);
  CHECK(y.grad_fn()->name() == "SoftmaxBackward0");
  (y * tensor({1.0, 2.0, 3.0}, kF64)).sum().backward();
  CHECK(x.grad().dtype() == DType::Float32);
}

TEST_CASE("gradcheck: native_layer_norm, layer_norm and rms_norm for input, weight and bias") {
  check_both("native_layer_norm",
             [](const std::vector<Tensor>& v) {
               return std::vector<Tensor>{std::get<0>(
                   native_layer_norm(v[0], {3}, std::optional<Tensor>(v[1]), std::optional<Tensor>(v[2]), 1e-5))};
             },
             {input({2, 3}), input({3}), input({3})});
  check_both("layer_norm two normalized dims, no affine",
             [](const std::vector<Tensor>& v) {
               return std::vector<Tensor>{layer_norm(v[0], {2, 3})};
             },
             {input({2, 2, 3})});
  check_both("layer_norm transposed input, whole tensor",
             [](const std::vector<Tensor>& v) {
               return std::vector<Tensor>{layer_norm(v[0], {2, 3}, std::optional<Tensor>(v[1]), std::nullopt, 1e-3)};
             },
             {transposed_input(2, 3), input({2, 3})});
  check_both("rms_norm",
             [](const std::vector<Tensor>& v) {
               return std::vector<Tensor>{rms_norm(v[0], {3}, std::optional<Tensor>(v[1]), 1e-4)};
             },
             {input({2, 3}), input({3})});
  check_both("rms_norm default eps, no weight",
             [](const std::vector<Tensor>& v) {
               return std::vector<Tensor>{rms_norm(v[0], {2, 2})};
             },
             {input({2, 2, 2})});
  Tensor x = input({2, 3});
  auto [out, mean, rstd] = native_layer_norm(x, {3}, std::nullopt, std::nullopt, 1e-5);
  CHECK(out.grad_fn()->name() == "NativeLayerNormBackward0");
  CHECK(rms_norm(x, {3}).grad_fn()->name() == "RmsNormBackward0");
}

TEST_CASE("gradcheck: native_dropout scales the kept elements, the mask gets no gradient") {
  // A fixed seed makes every evaluation draw the same mask.
  check_both("native_dropout", one([](const Tensor& t) {
               manual_seed(7);
               return std::get<0>(native_dropout(t, 0.4, true));
             }),
             {input({2, 3})});
  check_both("native_dropout eval", one([](const Tensor& t) { return std::get<0>(native_dropout(t, 0.4, false)); }),
             {input({3})});
  Tensor x = input({64});
  auto [y, mask] = native_dropout(x, 0.5, true);
  CHECK(y.grad_fn()->name() == "NativeDropoutBackward0");
  CHECK(!mask.requires_grad());
  y.sum().backward();
  CHECK(values(x.grad()) == values(mask.to(DType::Float64) * 2));
  Tensor w = input({4});
  CHECK(grad_of_sum(w, std::get<0>(native_dropout(w, 1.0, true))) == std::vector<double>{0, 0, 0, 0});
}
