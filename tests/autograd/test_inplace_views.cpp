// In-place operations on views (CopySlices, Note [View + in-place] in autograd/view_info.h):
// gradients against finite differences (gradcheck, gradgradcheck) and against the out-of-place
// equivalent written with take/index_put, the regenerated grad_fn of views, the errors PyTorch
// raises, and saved-tensor version checks through views.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "anatomy/anatomy.h"
#include "gradcheck_test_util.h"

using namespace anatomy;
using namespace anatomy::gradcheck_test;

namespace {

using ViewFn = std::function<Tensor(const Tensor&)>;
using InplaceFn = std::function<void(const Tensor& view, const Tensor& other)>;
using OutOfPlaceFn = std::function<Tensor(const Tensor& view, const Tensor& other)>;

// A 0-dim fp64 operand that does not require grad (Tensor has no in-place method taking a Scalar).
Tensor scalar(double v) { return full({}, v, kF64); }

struct Case {
  const char* name;
  std::vector<int64_t> base_sizes;
  ViewFn view;
  InplaceFn inplace;
  OutOfPlaceFn out_of_place;  // the view's new value, computed without writing
  bool second_order = true;   // gradgradcheck too
};

// The in-place form: a non-leaf base (leaf * 1), one of its views changed in place; returns the
// base (whose grad_fn is now CopySlices) and a later use of the view.
std::vector<Tensor> run_inplace(const Case& c, const std::vector<Tensor>& x) {
  Tensor base = x[0] * 1;
  Tensor v = c.view(base);
  c.inplace(v, x[1]);
  return {base, v * 2};
}

// The same function without in-place ops: the view's positions in the base (the view applied to
// an arange) get the new values through index_put.
std::vector<Tensor> run_out_of_place(const Case& c, const std::vector<Tensor>& x) {
  const Tensor positions = c.view(arange(x[0].numel(), TensorOptions().dtype(DType::Int64)).view(x[0].sizes()));
  const Tensor flat_positions = positions.reshape({-1});
  const Tensor old_values = x[0].reshape({-1}).take(flat_positions).view(positions.sizes());
  const Tensor new_values = c.out_of_place(old_values, x[1]);
  Tensor base = index_put(x[0].reshape({-1}), {flat_positions}, new_values.reshape({-1})).view(x[0].sizes());
  return {base, new_values * 2};
}

// d (sum(outputs[k] * weights[k])) / d inputs.
std::vector<std::vector<double>> grads_of(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                          const std::vector<Tensor>& weights) {
  Tensor loss = (outputs[0] * weights[0]).sum() + (outputs[1] * weights[1]).sum();
  std::vector<Tensor> g = autograd::grad({loss}, inputs, {}, std::nullopt, false, true);
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < g.size(); ++i) out.push_back(g[i].defined() ? values(g[i]) : values(zeros_like(inputs[i])));
  return out;
}

void check_case(const Case& c, const Tensor& other) {
  INFO(std::string(c.name));
  const std::vector<Tensor> inputs{input(c.base_sizes), other};
  const autograd::GradcheckFn inplace = [&c](const std::vector<Tensor>& x) { return run_inplace(c, x); };
  const autograd::GradcheckFn out_of_place = [&c](const std::vector<Tensor>& x) { return run_out_of_place(c, x); };

  // The values and the base's history.
  const std::vector<Tensor> got = run_inplace(c, inputs), want = run_out_of_place(c, inputs);
  REQUIRE(got[0].grad_fn() != nullptr);
  CHECK(got[0].grad_fn()->name() == "CopySlices");
  CHECK(values(got[0]) == values(want[0]));
  CHECK(values(got[1]) == values(want[1]));

  // The gradients equal the out-of-place equivalent's, and finite differences.
  const std::vector<Tensor> weights{randn(got[0].sizes(), kF64), randn(got[1].sizes(), kF64)};
  const auto g_in = grads_of(got, inputs, weights), g_out = grads_of(want, inputs, weights);
  REQUIRE(g_in.size() == g_out.size());
  for (size_t i = 0; i < g_in.size(); ++i) {
    REQUIRE(g_in[i].size() == g_out[i].size());
    for (size_t k = 0; k < g_in[i].size(); ++k) CHECK(g_in[i][k] == doctest::Approx(g_out[i][k]).epsilon(1e-12));
  }
  CHECK(autograd::gradcheck_report(inplace, inputs) == "");
  if (c.second_order) CHECK(autograd::gradgradcheck_report(inplace, inputs) == "");
}

// Views of a [3, 4] base, each with the shape of its operand.
struct ViewKind {
  const char* name;
  ViewFn view;
  std::vector<int64_t> sizes;  // the view's sizes
};
const std::vector<ViewKind> kViews = {
    {"select", [](const Tensor& t) { return t.select(1, 2); }, {3}},
    {"x[0]", [](const Tensor& t) { return t[0]; }, {4}},
    {"slice", [](const Tensor& t) { return t.slice(0, 1, 3); }, {2, 4}},
    {"strided slice", [](const Tensor& t) { return t.slice(1, 0, 4, 2); }, {3, 2}},
    {"narrow", [](const Tensor& t) { return t.narrow(1, 1, 2); }, {3, 2}},
    {"transpose", [](const Tensor& t) { return t.transpose(0, 1); }, {4, 3}},
    {"diagonal", [](const Tensor& t) { return t.diagonal(1); }, {3}},
    {"view",
     [](const Tensor& t) {
       return t.view({2, 6});
     },
     {2, 6}},
    {"unsqueeze", [](const Tensor& t) { return t.unsqueeze(0); }, {1, 3, 4}},
    {"view of a view", [](const Tensor& t) { return t.transpose(0, 1).select(0, 1).slice(0, 1, 3); }, {2}},
};

}  // namespace

TEST_CASE("inplace views: add_, mul_ and copy_ with an operand that requires grad, on every kind of view") {
  for (const ViewKind& vk : kViews) {
    const std::string add = std::string("add_ on ") + vk.name, mul = std::string("mul_ on ") + vk.name,
                      copy = std::string("copy_ on ") + vk.name;
    check_case({add.c_str(),
                {3, 4},
                vk.view,
                [](const Tensor& v, const Tensor& o) { v.add_(o, 0.5); },
                [](const Tensor& v, const Tensor& o) { return v + o * 0.5; }},
               input(vk.sizes));
    check_case({mul.c_str(),
                {3, 4},
                vk.view,
                [](const Tensor& v, const Tensor& o) { v.mul_(o); },
                [](const Tensor& v, const Tensor& o) { return v * o; }},
               input(vk.sizes));
    // copy_ broadcasts its source: a row, where the view has more than one dim.
    const std::vector<int64_t> src_sizes{vk.sizes.back()};
    check_case({copy.c_str(),
                {3, 4},
                vk.view,
                [](const Tensor& v, const Tensor& o) { v.copy_(o); },
                [](const Tensor& v, const Tensor& o) { return o.expand(v.sizes()) * 1; }},
               input(src_sizes));
  }
}

TEST_CASE("inplace views: relu_, zero_, fill_ and a scalar mul_ (the x.select(0, 0).mul_(2) of the docs)") {
  for (const ViewKind& vk : kViews) {
    const std::string relu_name = std::string("relu_ on ") + vk.name, zero = std::string("zero_ on ") + vk.name,
                      fill = std::string("fill_ on ") + vk.name, scale = std::string("mul_(2) on ") + vk.name;
    // The operand is unused; it requires grad so gradcheck sees a zero gradient for it.
    check_case({relu_name.c_str(),
                {3, 4},
                vk.view,
                [](const Tensor& v, const Tensor&) { v.relu_(); },
                [](const Tensor& v, const Tensor&) { return relu(v); },
                false},
               input({1}));
    check_case({zero.c_str(),
                {3, 4},
                vk.view,
                [](const Tensor& v, const Tensor&) { v.zero_(); },
                [](const Tensor& v, const Tensor&) { return v * 0; }},
               input({1}));
    check_case({fill.c_str(),
                {3, 4},
                vk.view,
                [](const Tensor& v, const Tensor&) { v.fill_(2.5); },
                [](const Tensor& v, const Tensor&) { return v * 0 + 2.5; }},
               input({1}));
    check_case({scale.c_str(),
                {3, 4},
                vk.view,
                [](const Tensor& v, const Tensor&) { v.mul_(scalar(2)); },
                [](const Tensor& v, const Tensor&) { return v * 2; }},
               input({1}));
  }
}

TEST_CASE("inplace views: x = leaf * 1, then x.select(0, 0).mul_(2), gives the leaf the gradient of the doubled row") {
  Tensor leaf = input({3, 2});
  Tensor x = leaf * 1;
  x[0].mul_(scalar(2));
  REQUIRE(x.grad_fn() != nullptr);
  CHECK(x.grad_fn()->name() == "CopySlices");
  CHECK(x[0].grad_fn()->name() == "SelectBackward0");
  const Tensor w = randn({3, 2}, kF64);
  (x * w).sum().backward();
  std::vector<double> want = values(w);
  want[0] *= 2;
  want[1] *= 2;
  CHECK(values(leaf.grad()) == want);
}

TEST_CASE("inplace views: the modified view's grad_fn is regenerated from its base's new history") {
  Tensor leaf = input({3, 2});
  Tensor x = leaf * 1;
  Tensor v = x.select(0, 1);
  CHECK(v.grad_fn()->name() == "SelectBackward0");
  v.mul_(scalar(3));
  REQUIRE(v.grad_fn() != nullptr);
  CHECK(v.grad_fn()->name() == "AsStridedBackward0");
  // Its one edge is the base's CopySlices.
  CHECK(v.grad_fn()->next_edges().at(0).function.get() == x.grad_fn());
  CHECK(x.version() == v.version());
  v.sum().backward();
  CHECK(values(leaf.grad()) == std::vector<double>{0, 0, 3, 3, 0, 0});
}

TEST_CASE("inplace views: a view used after its base was modified in place sees the new history") {
  // v is taken before the base changes; its grad_fn is regenerated when next read.
  const autograd::GradcheckFn fn = [](const std::vector<Tensor>& x) {
    Tensor base = x[0] * 1;
    Tensor v = base.select(0, 1);
    base.mul_(x[1]);
    return std::vector<Tensor>{v * 3};
  };
  const std::vector<Tensor> inputs{input({3, 2}), input({3, 2})};
  check_both("view after the base's mul_", fn, inputs);

  Tensor base = inputs[0] * 1;
  Tensor v = base.select(0, 1);
  CHECK(v.grad_fn()->name() == "SelectBackward0");
  base.mul_(inputs[1]);
  CHECK(v.grad_fn()->name() == "AsStridedBackward0");
  CHECK(v.requires_grad());
  (v * 3).sum().backward();
  std::vector<double> want(6, 0.0);
  const std::vector<double> other = values(inputs[1]);
  want[2] = 3 * other[2];
  want[3] = 3 * other[3];
  CHECK(values(inputs[0].grad()) == want);
}

TEST_CASE("inplace views: two views of one base modified in turn, the base used after both") {
  check_both("two views",
             [](const std::vector<Tensor>& x) {
               Tensor base = x[0] * 1;
               Tensor row = base.select(0, 0), col = base.select(1, 1);
               row.mul_(x[1]);
               col.add_(x[2]);
               return std::vector<Tensor>{base.exp(), row * 1, col * 1};
             },
             {input({3, 3}), input({3}), input({3})});
}

TEST_CASE("inplace views: double backward through CopySlices (gradgradcheck)") {
  check_both("mul_ on a select, then a nonlinear use of the base",
             [](const std::vector<Tensor>& x) {
               Tensor base = x[0].sin();
               base.select(1, 0).mul_(x[1]);
               return std::vector<Tensor>{(base * base).sum({1})};
             },
             {input({3, 2}), input({3})});
  check_both("copy_ into a diagonal",
             [](const std::vector<Tensor>& x) {
               Tensor base = x[0] * x[0];
               base.diagonal().copy_(x[1].exp());
               return std::vector<Tensor>{base.mm(base)};
             },
             {input({3, 3}), input({3})});
}

TEST_CASE("inplace views: a view made in no_grad mode of a base that requires grad cannot be modified with grad on") {
  Tensor leaf = input({2, 3});
  Tensor x = leaf * 1;
  Tensor w = input({3});
  Tensor v;
  {
    autograd::NoGradGuard no_grad;
    v = x[0];
    v.mul_(w);  // inside no_grad: allowed, not recorded
  }
  const std::vector<double> before = values(x);
  try {
    v.mul_(w);
    FAIL("expected a ValueError");
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("mul_.Tensor") != std::string::npos);
    CHECK(msg.find("A view was created in no_grad mode and is being modified inplace with grad mode enabled") !=
          std::string::npos);
  }
  CHECK(values(x) == before);
  // A view of that view inherits the restriction.
  CHECK_THROWS_AS(v.unsqueeze(0).add_(w), ValueError);
}

TEST_CASE("inplace views: a view of a base that does not require grad gives the base a history") {
  // As in PyTorch: x does not require grad, and writing w into a view of it makes x depend on w.
  Tensor x = full({2, 3}, 3.0, kF64);
  Tensor w = input({3});
  Tensor v = x[0];
  CHECK_FALSE(x.requires_grad());
  CHECK_FALSE(v.requires_grad());
  v.mul_(w);
  CHECK(x.requires_grad());
  REQUIRE(x.grad_fn() != nullptr);
  CHECK(x.grad_fn()->name() == "CopySlices");
  CHECK(v.requires_grad());
  x.select(0, 1).copy_(w);  // the other row: a second CopySlices around the first
  (x * full({2, 3}, 2.0, kF64)).sum().backward();
  // d/dw of sum(2 * 3 w) + sum(2 * w) = 6 + 2 per element.
  CHECK(values(w.grad()) == std::vector<double>{8, 8, 8});
  // Against finite differences, first and second order, with the base made inside the function.
  check_both("mul_ and add_ on views of a constant base",
             [](const std::vector<Tensor>& in) {
               Tensor base = full({3, 2}, 0.5, kF64);
               base.select(1, 0).mul_(in[0]);
               base.select(1, 1).add_(in[0] * in[0]);
               return std::vector<Tensor>{(base * base).sum({0})};
             },
             {input({3})});
}

TEST_CASE(
    "inplace views: a view made in no_grad mode of a base that does not require grad cannot be modified with grad on") {
  Tensor x = full({2, 3}, 1.0, kF64);
  Tensor w = input({3});
  Tensor v;
  {
    autograd::NoGradGuard no_grad;
    v = x[0];
  }
  CHECK_THROWS_AS(v.mul_(w), ValueError);
  CHECK(values(x) == std::vector<double>(6, 1.0));
  CHECK_FALSE(x.requires_grad());
}

TEST_CASE("inplace views: an output of split or chunk cannot be modified in place while recording") {
  Tensor x = input({4, 2}) * 1;
  Tensor w = input({2});
  for (const auto& parts : {x.split(2), x.chunk(2)}) {
    try {
      parts[1].mul_(w);
      FAIL("expected a ValueError");
    } catch (const ValueError& e) {
      const std::string msg = e.what();
      CHECK(msg.find("mul_.Tensor") != std::string::npos);
      CHECK(msg.find("Output 1 of SplitWithSizesBackward0 is a view and is being modified inplace. This view is the "
                     "output of a function that returns multiple views.") != std::string::npos);
    }
    // A view of a piece too.
    CHECK_THROWS_AS(parts[0].select(0, 0).add_(w), ValueError);
  }
  // Without grad mode nothing records, so nothing is refused.
  autograd::NoGradGuard no_grad;
  x.split(2)[0].zero_();
  CHECK(values(x)[0] == 0.0);
}

TEST_CASE("inplace views: a view of a leaf that requires grad cannot be modified in place") {
  Tensor leaf = input({2, 3});
  const std::vector<double> before = values(leaf);
  try {
    leaf[0].mul_(scalar(2));
    FAIL("expected a ValueError");
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("mul_.Tensor") != std::string::npos);
    CHECK(msg.find("a view of a leaf Variable that requires grad is being used in an in-place operation") !=
          std::string::npos);
  }
  CHECK_THROWS_AS(leaf.transpose(0, 1).select(0, 1).fill_(0), ValueError);
  CHECK(values(leaf) == before);
  // Under no_grad (an optimizer step) it is fine.
  autograd::NoGradGuard no_grad;
  leaf[0].mul_(scalar(2));
  CHECK(values(leaf)[0] == 2 * before[0]);
}

TEST_CASE("inplace views: a saved tensor modified through a view makes backward fail with both versions") {
  SUBCASE("recorded: the base saved by mul, then a view of it changed") {
    Tensor x = input({2, 2}) * 1;
    Tensor y = x * x;  // MulBackward0 saves x
    const uint32_t saved = x.version();
    x[1].mul_(scalar(2));
    CHECK(x.version() == saved + 1);
    try {
      y.sum().backward();
      FAIL("expected a ValueError");
    } catch (const ValueError& e) {
      const std::string msg = e.what();
      CHECK(msg.find("MulBackward0") != std::string::npos);
      CHECK(msg.find(fmt::format("is at version {}; expected version {}", saved + 1, saved)) != std::string::npos);
    }
  }
  SUBCASE("unrecorded: exp's saved result zeroed through a view under no_grad") {
    Tensor leaf = input({3});
    Tensor y = leaf.exp();  // ExpBackward0 saves its result
    {
      autograd::NoGradGuard no_grad;
      y.narrow(0, 1, 1).zero_();
    }
    CHECK_THROWS_AS(y.sum().backward(), ValueError);
  }
  SUBCASE("the view saved, the base changed") {
    Tensor x = input({2, 2}) * 1;
    Tensor v = x.select(0, 0);
    Tensor y = v * v;  // saves v
    x.add_(scalar(1));
    CHECK(v.version() == x.version());
    CHECK_THROWS_AS(y.sum().backward(), ValueError);
  }
}

TEST_CASE("inplace views: print_graph shows CopySlices and the node it wraps") {
  Tensor x = input({2, 2}) * 1;
  x.select(0, 0).mul_(input({2}));
  const std::string graph = autograd::print_graph(x);
  CHECK(graph.find("CopySlices") != std::string::npos);
  CHECK(graph.find("wraps MulBackward0") != std::string::npos);
}

TEST_CASE("inplace views: a chain of 20000 in-place ops on views runs backward and frees without recursion") {
  Tensor leaf = input({2});
  Tensor x = leaf * 1;
  for (int i = 0; i < 20000; ++i) x[0].mul_(scalar(1.0001));
  x.sum().backward();
  CHECK(values(leaf.grad())[0] == doctest::Approx(std::pow(1.0001, 20000)).epsilon(1e-9));
  CHECK(values(leaf.grad())[1] == 1.0);
  x = Tensor();  // frees the 20000 CopySlices nodes
}
