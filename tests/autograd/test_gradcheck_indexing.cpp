// gradcheck and gradgradcheck of the joining, indexing, scattering, reordering, sorting, scan,
// splitting, as_strided and baddbmm formulas, on random fp64 inputs including broadcast and
// transposed (non-contiguous) ones and repeated indices where they add up.
#include <doctest/doctest.h>

#include "anatomy/anatomy.h"
#include "gradcheck_test_util.h"

using namespace anatomy;
using namespace anatomy::gradcheck_test;
using autograd::GradcheckFn;

namespace {

Tensor idx(std::initializer_list<int64_t> v) { return tensor(v); }

}  // namespace

TEST_CASE("gradcheck: cat and stack split the gradient among their inputs") {
  check_both("cat dim 0", two([](const Tensor& a, const Tensor& b) {
               return cat({a, b}, 0);
             }),
             {input({2, 3}), transposed_input(1, 3)});
  check_both("cat dim -1 with a legacy empty input",
             [](const std::vector<Tensor>& x) {
               return std::vector<Tensor>{cat({x[0], x[1], x[2]}, -1)};
             },
             {input({2, 1}), input({0}), transposed_input(2, 2)});
  check_both("stack dim 1", two([](const Tensor& a, const Tensor& b) {
               return stack({a, b}, 1);
             }),
             {input({2, 3}), transposed_input(2, 3)});
  Tensor a = input({2});
  Tensor c = cat({a, a * 2}, 0);
  CHECK(c.grad_fn()->name() == "CatBackward0");
}

TEST_CASE("gradcheck: index_select, gather, take and embedding add gradients back at repeated indices") {
  check_both("index_select dim 1", one([](const Tensor& t) {
               return t.index_select(1, idx({2, 0, 2}));
             }),
             {transposed_input(2, 3)});
  check_both("index_select dim 0", one([](const Tensor& t) {
               return t.index_select(0, idx({1, 1}));
             }),
             {input({3, 2})});
  check_both("gather", one([](const Tensor& t) { return t.gather(1, tensor({{0, 0}, {2, 1}})); }), {input({2, 3})});
  check_both("take", one([](const Tensor& t) { return take(t, tensor({{0, 5}, {-1, 0}})); }), {transposed_input(2, 3)});
  check_both("embedding", one([](const Tensor& w) { return embedding(w, tensor({{0, 2}, {2, 3}})); }), {input({4, 3})});
}

TEST_CASE("gradcheck: scatter and scatter_add, functional and in-place") {
  const Tensor index = tensor({{1, 3}, {0, 2}});  // distinct along dim 1
  check_both("scatter src", two([index](const Tensor& s, const Tensor& src) { return scatter(s, 1, index, src); }),
             {input({2, 4}), transposed_input(2, 3)});
  check_both("scatter value", one([index](const Tensor& s) { return scatter(s, 1, index, Scalar(2.0)); }),
             {input({2, 4})});
  check_both("scatter_ on a non-leaf", two([index](const Tensor& s, const Tensor& src) {
               Tensor t = s * 1;
               t.scatter_(1, index, src);
               return t;
             }),
             {input({2, 4}), input({2, 2})});
  const Tensor repeated = tensor({{1, 1, 0}, {2, 2, 2}});
  check_both("scatter_add, repeated indices",
             two([repeated](const Tensor& s, const Tensor& src) { return scatter_add(s, 1, repeated, src); }),
             {input({2, 3}), transposed_input(2, 3)});
  check_both("scatter_add_ on a non-leaf", two([repeated](const Tensor& s, const Tensor& src) {
               Tensor t = s * 1;
               t.scatter_add_(1, repeated, src);
               return t;
             }),
             {input({2, 3}), input({2, 3})});
}

TEST_CASE("gradcheck: advanced indexing, index_put and masked_select") {
  const Tensor none;
  check_both("index with a slice and an index", one([none](const Tensor& t) {
               return t.index({none, idx({2, 0, 2})});
             }),
             {transposed_input(2, 3)});
  check_both("index with two broadcast indices", one([](const Tensor& t) {
               return t.index({tensor({{0}, {1}}), idx({1, 1, 0})});
             }),
             {input({2, 3})});
  const Tensor mask = tensor({true, false, true, true, false, true}).view({2, 3});
  check_both("index with a bool mask", one([mask](const Tensor& t) { return t.index({mask}); }), {input({2, 3})});
  check_both("index_put, broadcast values", two([](const Tensor& s, const Tensor& v) {
               return index_put(s, {idx({2, 0})}, v);
             }),
             {input({3, 2}), input({2})});
  check_both("index_put accumulate, repeated indices", two([](const Tensor& s, const Tensor& v) {
               return index_put(s, {idx({1, 1, 0})}, v, true);
             }),
             {transposed_input(2, 3), input({3, 3})});
  check_both("index_put_ on a non-leaf", two([none](const Tensor& s, const Tensor& v) {
               Tensor t = s * 1;
               t.index_put_({none, idx({0, 2})}, v);
               return t;
             }),
             {input({2, 3}), input({2, 1})});
  check_both("masked_select, broadcast self", one([mask](const Tensor& s) { return masked_select(s, mask); }),
             {input({1, 3})});
  check_both("masked_select, transposed self", one([mask](const Tensor& s) { return masked_select(s, mask); }),
             {transposed_input(2, 3)});
}

TEST_CASE("gradcheck: repeat, flip, roll, tril and triu") {
  check_both("repeat", one([](const Tensor& t) { return t.repeat({2, 1, 2}); }), {transposed_input(2, 3)});
  check_both("flip", one([](const Tensor& t) { return t.flip({0, -1}); }), {transposed_input(2, 3)});
  check_both("roll dims", one([](const Tensor& t) { return t.roll({1, -2}, {0, 1}); }), {input({2, 3})});
  check_both("roll flat", one([](const Tensor& t) { return t.roll({4}); }), {transposed_input(2, 3)});
  check_both("tril", one([](const Tensor& t) { return t.tril(-1); }), {input({3, 3})});
  check_both("triu", one([](const Tensor& t) { return t.triu(1); }), {transposed_input(3, 4)});
}

TEST_CASE("gradcheck: sort and topk values (distinct values), indices without history") {
  check_both("sort", one([](const Tensor& t) { return std::get<0>(t.sort(1)); }), {transposed_input(2, 4)});
  check_both("sort descending dim 0", one([](const Tensor& t) { return std::get<0>(t.sort(0, true)); }),
             {input({3, 2})});
  check_both("topk largest", one([](const Tensor& t) { return std::get<0>(t.topk(2, 1)); }), {input({2, 4})});
  check_both("topk smallest unsorted", one([](const Tensor& t) { return std::get<0>(t.topk(2, 0, false, false)); }),
             {transposed_input(4, 2)});
  auto [values, indices] = input({4}).sort();
  CHECK(values.grad_fn()->name() == "SortBackward0");
  CHECK(!indices.requires_grad());
}

TEST_CASE("gradcheck: cumsum and cumprod, with and without zeros") {
  check_both("cumsum", one([](const Tensor& t) { return t.cumsum(1); }), {transposed_input(2, 3)});
  check_both("cumsum dim 0", one([](const Tensor& t) { return t.cumsum(0); }), {input({3, 2})});
  check_both("cumprod", one([](const Tensor& t) { return t.cumprod(-1); }), {positive_input({2, 4})});
  check_both("cumprod transposed", one([](const Tensor& t) { return t.cumprod(0); }), {transposed_input(3, 2)});
  Tensor with_zeros = tensor({{0.5, 0.0, 1.5, -2.0}, {0.0, 1.25, 0.0, 0.75}}, kF64).requires_grad_();
  check_both("cumprod with zeros", one([](const Tensor& t) { return t.cumprod(1); }), {with_zeros});
}

TEST_CASE("gradcheck: split_with_sizes, split and chunk join the pieces' gradients") {
  check_both("split_with_sizes, one piece unused",
             [](const std::vector<Tensor>& x) {
               std::vector<Tensor> parts = x[0].split_with_sizes({1, 2, 1}, 1);
               return std::vector<Tensor>{parts[0], parts[2] * 3};
             },
             {transposed_input(2, 4)});
  check_both("split", [](const std::vector<Tensor>& x) { return x[0].split(2, 0); }, {input({5, 2})});
  check_both("chunk", [](const std::vector<Tensor>& x) { return x[0].chunk(2, -1); }, {input({2, 3})});
}

TEST_CASE("gradcheck: as_strided, overlapping output and offset, overlapping input refused") {
  check_both("as_strided with an offset", one([](const Tensor& t) {
               return t.as_strided({2, 2}, {1, 3}, 1) * 1;
             }),
             {input({3, 3})});
  check_both("as_strided of a transposed input", one([](const Tensor& t) {
               return t.as_strided({3, 2}, {2, 1}) * 1;
             }),
             {transposed_input(2, 3)});
  check_both("as_strided with overlapping output", one([](const Tensor& t) {
               return t.as_strided({3, 2}, {1, 1}) * 1;
             }),
             {input({4})});
  Tensor expanded = randn({1, 3}, kF64).expand({2, 3}).requires_grad_();
  Tensor out = expanded.as_strided({2}, {1}).sum();
  CHECK_THROWS_AS(out.backward(), NotImplementedError);
}

TEST_CASE("gradcheck: baddbmm with a broadcast self, beta and alpha") {
  check_both("baddbmm",
             [](const std::vector<Tensor>& x) { return std::vector<Tensor>{baddbmm(x[0], x[1], x[2], 0.5, 2)}; },
             {input({2}), input({2, 2, 3}), randn({2, 2, 3}, kF64).transpose(1, 2).requires_grad_()});
  check_both("baddbmm defaults",
             [](const std::vector<Tensor>& x) { return std::vector<Tensor>{baddbmm(x[0], x[1], x[2])}; },
             {input({2, 1, 2}), input({2, 1, 2}), input({2, 2, 2})});
}
