// autograd::Function: user-written forward and backward (autograd/custom_function.h), through
// the public header only. The first function is docs/autograd.md's example, verbatim.
#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>

#include "anatomy/anatomy.h"
#include "gradcheck_test_util.h"

using namespace anatomy;
using namespace anatomy::gradcheck_test;

namespace {

// y = x * exp(c * x), with its derivative written by hand.
struct ScaledExp : autograd::Function<ScaledExp> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, double c) {
    ctx->save_for_backward({x});
    ctx->saved_data["c"] = c;
    return x * (x * c).exp();  // forward runs with grad mode off
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    const Tensor x = ctx->get_saved_variables()[0];
    const double c = ctx->saved_data["c"].get<double>();
    // d/dx x e^(cx) = e^(cx) (1 + cx): one gradient per forward input, none for c.
    return {grads[0] * (x * c).exp() * (x * c + 1.0), Tensor()};
  }
};

TEST_CASE("custom function: the docs' example computes y = x exp(cx) and its gradient") {
  Tensor x = randn({5}, kF64).requires_grad_();
  Tensor y = ScaledExp::apply(x, 0.5);
  CHECK(y.grad_fn()->name() == "ScaledExp");
  y.sum().backward();
  autograd::NoGradGuard no_grad;
  CHECK(allclose(y, x * (x * 0.5).exp()));
  CHECK(allclose(x.grad(), (x * 0.5).exp() * (x * 0.5 + 1.0)));
}

// docs/autograd.md, "Custom functions", shows the code above verbatim.
TEST_CASE("custom function: docs/autograd.md's example is this file's code, verbatim") {
  const std::string root = ANATOMY_SOURCE_DIR;  // set by tests/CMakeLists.txt
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    REQUIRE_MESSAGE(in.good(), "cannot read " << path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::string source = read(root + "/tests/autograd/test_custom_function.cpp");
  const std::string doc = read(root + "/docs/autograd.md");
  const std::string marker = "<!-- excerpt: tests/autograd/test_custom_function.cpp -->\n```cpp\n";
  size_t start = doc.find(marker);
  REQUIRE_MESSAGE(start != std::string::npos, "docs/autograd.md lacks the custom function's marker");
  start += marker.size();
  const size_t end = doc.find("```\n", start);
  REQUIRE(end != std::string::npos);
  const std::string block = doc.substr(start, end - start);
  CHECK(block.find("struct ScaledExp") != std::string::npos);
  CHECK_MESSAGE(source.find(block) != std::string::npos,
                "the example in docs/autograd.md is not an excerpt of tests/autograd/test_custom_function.cpp");
}

// ---- gradcheck ----

// Two tensor inputs around a non-tensor one: a * b + alpha * a.
struct MulAdd : autograd::Function<MulAdd> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& a, double alpha, const Tensor& b) {
    ctx->save_for_backward({a, b});
    ctx->saved_data["alpha"] = alpha;
    return a * b + a * alpha;
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const double alpha = ctx->saved_data["alpha"].get<double>();
    Tensor ga, gb;
    if (ctx->needs_input_grad(0)) ga = grads[0] * (saved[1] + alpha);
    if (ctx->needs_input_grad(2)) gb = grads[0] * saved[0];
    return {ga, Tensor(), gb};
  }
};

// Two outputs, as a tuple: (sin x, cos x); backward reads its saved input.
struct SinCos : autograd::Function<SinCos> {
  static std::tuple<Tensor, Tensor> forward(autograd::AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return {x.sin(), x.cos()};
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    const Tensor x = ctx->get_saved_variables()[0];
    return {grads[0] * x.cos() - grads[1] * x.sin()};
  }
};

// Saves its own output: y = exp(x), dy/dx = y (double backward goes through the node again).
struct Exp : autograd::Function<Exp> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
    Tensor y = x.exp();
    ctx->save_for_backward({y});
    return y;
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    return {grads[0] * ctx->get_saved_variables()[0]};
  }
};

TEST_CASE("custom function: gradcheck and gradgradcheck, contiguous and not") {
  check_both("ScaledExp", one([](const Tensor& x) { return ScaledExp::apply(x, 0.7); }), {input({3, 4})});
  check_both("ScaledExp, transposed", one([](const Tensor& x) { return ScaledExp::apply(x, -0.3); }),
             {transposed_input(3, 4)});
  check_both("MulAdd", two([](const Tensor& a, const Tensor& b) { return MulAdd::apply(a, 2.5, b); }),
             {input({2, 3}), transposed_input(2, 3)});
  check_both("MulAdd, broadcast", two([](const Tensor& a, const Tensor& b) { return MulAdd::apply(a, 1.0, b); }),
             {input({2, 3}), input({3})});
  check_both("Exp", one([](const Tensor& x) { return Exp::apply(x); }), {transposed_input(2, 3)});
  autograd::GradcheckFn sincos = [](const std::vector<Tensor>& x) {
    auto [s, c] = SinCos::apply(x[0]);
    return std::vector<Tensor>{s, c};
  };
  check_both("SinCos", sincos, {input({4})});
  check_both("SinCos, strided", sincos, {input({3, 4}).narrow(1, 1, 2)});
}

TEST_CASE("custom function: a composition with built-ins, and the graph dump names the function") {
  Tensor x = randn({2, 3}, kF64).requires_grad_();
  Tensor w = randn({3}, kF64).requires_grad_();
  Tensor loss = ScaledExp::apply(MulAdd::apply(x, 0.5, w), 1.0).relu().sum();
  const std::string graph = autograd::print_graph(loss);
  CHECK(graph.find("ScaledExp") != std::string::npos);
  CHECK(graph.find("MulAdd") != std::string::npos);
  CHECK(graph.find("saved tensor 0: [2, 3] fp64") != std::string::npos);
  CHECK(graph.find("saved data alpha: 0.5") != std::string::npos);
  CHECK(autograd::to_dot(loss).find("MulAdd") != std::string::npos);
  CHECK(autograd::gradcheck(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ScaledExp::apply(MulAdd::apply(in[0], 0.5, in[1]), 1.0).tanh()};
      },
      {x, w}));
}

// ---- outputs and inputs ----

struct SplitHalves : autograd::Function<SplitHalves> {
  static std::vector<Tensor> forward(autograd::AutogradContext* ctx, const Tensor& x) {
    ctx->saved_data["n"] = x.size(0);
    const int64_t half = x.size(0) / 2;
    return {x.narrow(0, 0, half).clone(), x.narrow(0, half, x.size(0) - half) * 2.0};
  }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    return {cat({grads[0], grads[1] * 2.0}, 0)};
  }
};

TEST_CASE("custom function: several outputs as a vector, one of them unused (its gradient is zeros)") {
  Tensor x = randn({5}, kF64).requires_grad_();
  std::vector<Tensor> parts = SplitHalves::apply(x);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].grad_fn() == parts[1].grad_fn());
  CHECK(parts[1].sizes() == IntArrayRef{3});
  parts[1].sum().backward();  // parts[0] gets no gradient: backward sees zeros for it
  CHECK(values(x.grad()) == std::vector<double>{0, 0, 2, 2, 2});
  check_both("SplitHalves", [](const std::vector<Tensor>& in) { return SplitHalves::apply(in[0]); }, {input({5})});
}

// x^n for n >= 0, by products.
Tensor power_of(const Tensor& x, int64_t n) {
  Tensor y = ones_like(x);
  for (int64_t i = 0; i < n; ++i) y = y * x;
  return y;
}

// Arguments of many kinds: only the tensor positions get gradients.
struct Mixed : autograd::Function<Mixed> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, int64_t power, const std::string& mode,
                        const std::vector<Tensor>& extra, std::optional<Tensor> missing) {
    CHECK(mode == "pow");
    CHECK_FALSE(missing.has_value());
    ctx->saved_data["power"] = power;
    std::vector<Tensor> to_save{x};
    to_save.insert(to_save.end(), extra.begin(), extra.end());
    ctx->save_for_backward(to_save);
    Tensor y = power_of(x, power);
    for (const Tensor& e : extra) y = y + e * 3.0;
    return y;
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto power = ctx->saved_data["power"].get<int64_t>();
    // Positions: x, power, mode, extra[0], extra[1], missing.
    return {grads[0] * power_of(saved[0], power - 1) * static_cast<double>(power),
            Tensor(),
            Tensor(),
            grads[0] * 3.0,
            grads[0] * 3.0,
            Tensor()};
  }
};

TEST_CASE("custom function: non-tensor arguments, a tensor list and an empty optional") {
  Tensor x = randn({4}, kF64).requires_grad_();
  Tensor e0 = randn({4}, kF64).requires_grad_();
  Tensor e1 = randn({4}, kF64);  // needs no gradient
  Tensor y = Mixed::apply(x, int64_t{3}, std::string("pow"), std::vector<Tensor>{e0, e1}, std::nullopt);
  y.sum().backward();
  autograd::NoGradGuard no_grad;
  CHECK(allclose(x.grad(), x * x * 3.0));
  CHECK(allclose(e0.grad(), full({4}, 3.0, kF64)));
  CHECK_FALSE(e1.grad().defined());
}

struct RecordNeeds : autograd::Function<RecordNeeds> {
  inline static std::vector<bool> seen;
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& a, double, const Tensor& b) {
    seen = {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)};
    CHECK_THROWS_WITH_AS(ctx->needs_input_grad(3), doctest::Contains("RecordNeeds: needs_input_grad(3)"), IndexError);
    return a + b;
  }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    return {grads[0], Tensor(), grads[0]};
  }
};

TEST_CASE("custom function: needs_input_grad counts forward's positions") {
  Tensor a = randn({2}).requires_grad_();
  Tensor b = randn({2});
  RecordNeeds::apply(a, 1.0, b);
  CHECK(RecordNeeds::seen == std::vector<bool>{true, false, false});
  RecordNeeds::apply(b, 1.0, a);
  CHECK(RecordNeeds::seen == std::vector<bool>{false, false, true});
  RecordNeeds::apply(b, 1.0, b);  // nothing records: every position is false
  CHECK(RecordNeeds::seen == std::vector<bool>{false, false, false});
}

TEST_CASE("custom function: nothing records without grad mode or an input that requires grad") {
  Tensor x = randn({3}, kF64).requires_grad_();
  {
    autograd::NoGradGuard no_grad;
    Tensor y = ScaledExp::apply(x, 1.0);
    CHECK(y.grad_fn() == nullptr);
    CHECK_FALSE(y.requires_grad());
  }
  Tensor plain = randn({3}, kF64);
  Tensor y = ScaledExp::apply(plain, 1.0);
  CHECK(y.grad_fn() == nullptr);
  CHECK_FALSE(y.requires_grad());
  CHECK(allclose(y, plain * (plain * 1.0).exp()));
  {
    autograd::InferenceMode inference;  // saving inference tensors is fine when nothing records
    Tensor z = ScaledExp::apply(randn({3}, kF64), 1.0);
    CHECK(z.is_inference());
    CHECK(z.grad_fn() == nullptr);
  }
}

struct Identity : autograd::Function<Identity> {
  static Tensor forward(autograd::AutogradContext*, const Tensor& x) { return x; }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    return {grads[0] * 2.0};  // not the identity's, so the test sees which path ran
  }
};

TEST_CASE("custom function: an input returned as is comes back as an alias with the node as history") {
  Tensor x = randn({3}, kF64).requires_grad_();
  Tensor y = Identity::apply(x);
  CHECK(y.impl() != x.impl());
  CHECK(y.is_alias_of(x));
  CHECK(x.grad_fn() == nullptr);  // the leaf keeps being a leaf
  CHECK(y.grad_fn()->name() == "Identity");
  y.sum().backward();
  CHECK(values(x.grad()) == std::vector<double>{2, 2, 2});
}

// A view of its input made in forward: the second row, with a backward that says which path ran.
struct SecondRow : autograd::Function<SecondRow> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
    ctx->saved_data["rows"] = x.size(0);
    ctx->saved_data["cols"] = x.size(1);
    return x.select(0, 1);
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    Tensor g = zeros({ctx->saved_data["rows"].get<int64_t>(), ctx->saved_data["cols"].get<int64_t>()}, kF64);
    g.select(0, 1).copy_(grads[0] * 3.0);
    return {g};
  }
};

TEST_CASE("custom function: an output aliasing an input is a view that refuses in-place changes while recording") {
  // PyTorch's CreationMeta::IN_CUSTOM_FUNCTION: the view + in-place logic would replace the
  // function's backward, so the in-place change is refused and nothing is written.
  Tensor x = randn({3}, kF64).requires_grad_();
  Tensor a = x * 1.0;
  Tensor y = Identity::apply(a);
  const std::vector<double> before = values(a);
  const auto version = a.version();
  CHECK_THROWS_WITH_AS(y.mul_(2.0), doctest::Contains("created inside a custom Function"), ValueError);
  CHECK_THROWS_WITH_AS(y.add_(1.0), doctest::Contains("Output 0 of Identity is a view"), ValueError);
  CHECK(values(a) == before);
  CHECK(a.version() == version);

  Tensor base = randn({2, 3}, kF64).requires_grad_();
  Tensor row = SecondRow::apply(base * 1.0);
  CHECK(row.grad_fn()->name() == "SecondRow");
  CHECK_THROWS_AS(row.zero_(), ValueError);
  row.sum().backward();  // the function's backward ran: 3 on the second row
  CHECK(values(base.grad()) == std::vector<double>{0, 0, 0, 3, 3, 3});

  // Under no_grad nothing records, and the change is the user's to make.
  {
    autograd::NoGradGuard no_grad;
    y.mul_(2.0);
  }
  CHECK(values(a) == std::vector<double>{2 * before[0], 2 * before[1], 2 * before[2]});
  // A clone is a tensor of its own.
  Tensor c = Identity::apply(a).clone();
  c.mul_(2.0);
  c.sum().backward();
  CHECK(values(x.grad()) == std::vector<double>{4, 4, 4});  // 2 (clone of mul_) * 2 (Identity's backward)
}

TEST_CASE("custom function: after an in-place change of its base, an aliasing output's history is the base's") {
  Tensor x = randn({2, 3}, kF64).requires_grad_();
  Tensor base = x * 1.0;
  Tensor row = SecondRow::apply(base);
  base.mul_(2.0);  // the base's history changes; the row is read out of it from now on
  CHECK(row.grad_fn()->name() == "AsStridedBackward0");
  row.sum().backward();
  CHECK(values(x.grad()) == std::vector<double>{0, 0, 0, 2, 2, 2});
}

// ---- mark_dirty, mark_non_differentiable, set_materialize_grads ----

struct MulInPlace : autograd::Function<MulInPlace> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, double c) {
    x.mul_(c);
    ctx->mark_dirty({x});
    ctx->saved_data["c"] = c;
    return x;
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    return {grads[0] * ctx->saved_data["c"].get<double>(), Tensor()};
  }
};

TEST_CASE("custom function: mark_dirty makes the function the new history of the input it modified") {
  Tensor x = randn({3}, kF64).requires_grad_();
  Tensor a = x * 1.0;
  const auto version = a.version();
  Tensor b = MulInPlace::apply(a, 3.0);
  CHECK(b.impl() == a.impl());  // the same tensor, changed in place
  CHECK(a.version() > version);
  CHECK(a.grad_fn()->name() == "MulInPlace");
  (a * a).sum().backward();  // d/dx (3x)^2 = 18x
  autograd::NoGradGuard no_grad;
  CHECK(allclose(x.grad(), x * 18.0));
}

TEST_CASE("custom function: an in-place function passes gradcheck and gradgradcheck") {
  check_both("MulInPlace", one([](const Tensor& x) { return MulInPlace::apply(x * 1.0, -1.5); }), {input({2, 3})});
  check_both("MulInPlace, transposed", one([](const Tensor& x) { return MulInPlace::apply(x.clone(), 0.5); }),
             {transposed_input(3, 2)});
}

TEST_CASE("custom function: mark_dirty on a view rebases the base's history") {
  Tensor x = randn({2, 3}, kF64).requires_grad_();
  Tensor base = x * 1.0;
  MulInPlace::apply(base.select(0, 1), 5.0);
  CHECK(base.grad_fn()->name() == "CopySlices");
  base.sum().backward();
  CHECK(values(x.grad()) == std::vector<double>{1, 1, 1, 5, 5, 5});
}

TEST_CASE("custom function: mark_dirty errors are typed and name the function") {
  Tensor leaf = randn({3}, kF64).requires_grad_();
  CHECK_THROWS_WITH_AS(MulInPlace::apply(leaf, 2.0),
                       doctest::Contains("MulInPlace: a leaf tensor that requires grad is being used in an in-place"),
                       ValueError);

  struct DirtyNotReturned : autograd::Function<DirtyNotReturned> {
    static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
      x.add_(1.0);
      ctx->mark_dirty({x});
      return x * 2.0;
    }
    static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) { return g; }
  };
  Tensor a = randn({3}, kF64).requires_grad_() * 1.0;
  CHECK_THROWS_WITH_AS(DirtyNotReturned::apply(a), doctest::Contains("was not returned as an output"), ValueError);
  CHECK(a.grad_fn()->name() == "MulBackward0");  // its history is unchanged

  struct DirtyNotInput : autograd::Function<DirtyNotInput> {
    static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
      Tensor y = x * 2.0;
      ctx->mark_dirty({y});
      return y;
    }
    static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) { return g; }
  };
  CHECK_THROWS_WITH_AS(DirtyNotInput::apply(a), doctest::Contains("only input tensors may be passed to mark_dirty"),
                       ValueError);
}

struct MaxWithIndex : autograd::Function<MaxWithIndex> {
  inline static bool index_grad_was_zeros = false;
  static std::tuple<Tensor, Tensor> forward(autograd::AutogradContext* ctx, const Tensor& x) {
    Tensor index = x.argmax(0).to(DType::Float64);  // a floating output that is not differentiable
    ctx->mark_non_differentiable({index});
    ctx->save_for_backward({x, index});
    return {x.amax({0}), index};
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    index_grad_was_zeros = grads[1].defined() && grads[1].item().to<double>() == 0.0;
    const auto saved = ctx->get_saved_variables();
    Tensor one_hot = zeros_like(saved[0]);
    one_hot.index_put_({saved[1].to(DType::Int64)}, ones({}, kF64));
    return {grads[0] * one_hot};
  }
};

TEST_CASE("custom function: mark_non_differentiable outputs need no gradient, and backward gets zeros for them") {
  Tensor x = tensor({1.0, 5.0, 2.0}).to(DType::Float64).requires_grad_();
  auto [value, index] = MaxWithIndex::apply(x);
  CHECK(value.requires_grad());
  CHECK_FALSE(index.requires_grad());
  CHECK(index.grad_fn() == nullptr);
  CHECK(index.item().to<double>() == 1.0);
  value.backward();
  CHECK(MaxWithIndex::index_grad_was_zeros);
  CHECK(values(x.grad()) == std::vector<double>{0, 1, 0});
}

struct SeesUndefined : autograd::Function<SeesUndefined> {
  inline static std::vector<bool> defined;
  static std::tuple<Tensor, Tensor> forward(autograd::AutogradContext* ctx, const Tensor& x, bool materialize) {
    ctx->set_materialize_grads(materialize);
    return {x * 2.0, x * 3.0};
  }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    defined = {grads[0].defined(), grads[1].defined()};
    Tensor g = grads[0].defined() ? grads[0] * 2.0 : Tensor();
    if (grads[1].defined()) g = g.defined() ? g + grads[1] * 3.0 : grads[1] * 3.0;
    return {g, Tensor()};
  }
};

TEST_CASE("custom function: with set_materialize_grads(false), backward sees undefined gradients") {
  Tensor x = randn({2}, kF64).requires_grad_();
  auto [a, b] = SeesUndefined::apply(x, false);
  b.sum().backward();
  CHECK(SeesUndefined::defined == std::vector<bool>{false, true});
  CHECK(values(x.grad()) == std::vector<double>{3, 3});
  auto [c, d] = SeesUndefined::apply(x, true);
  c.sum().backward();
  CHECK(SeesUndefined::defined == std::vector<bool>{true, true});
}

// ---- errors ----

TEST_CASE("custom function: a saved tensor changed in place before backward is the engine's version error") {
  Tensor x = randn({3}, kF64).requires_grad_();
  Tensor a = x * 1.0;
  Tensor y = ScaledExp::apply(a, 1.0);
  a.mul_(2.0);
  CHECK_THROWS_WITH_AS(y.sum().backward(),
                       doctest::Contains("ScaledExp: one of the tensors needed for gradient computation has been "
                                         "modified by an in-place operation"),
                       ValueError);
  // A saved output too.
  Tensor e = Exp::apply(x);
  e.add_(1.0);
  CHECK_THROWS_WITH_AS(e.sum().backward(), doctest::Contains("Exp: one of the tensors needed"), ValueError);
}

TEST_CASE("custom function: the saved tensors are freed by backward, and a second one says retain_graph") {
  Tensor x = randn({3}, kF64).requires_grad_();
  Tensor y = ScaledExp::apply(x, 1.0).sum();
  y.backward();
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("ScaledExp: trying to backward through the graph a second time"),
                       ValueError);
  Tensor z = ScaledExp::apply(x, 1.0).sum();
  z.backward({}, /*retain_graph=*/true);
  z.backward();  // retained: runs again
}

template <int kCount>
struct WrongCount : autograd::Function<WrongCount<kCount>> {
  static std::string name() { return "WrongCount"; }
  static Tensor forward(autograd::AutogradContext*, const Tensor& x, const Tensor& y) { return x * y; }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    return autograd::variable_list(kCount, grads[0]);
  }
};

struct WrongShape : autograd::Function<WrongShape> {
  static Tensor forward(autograd::AutogradContext*, const Tensor& x, double) { return x * 2.0; }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    return {grads[0].sum({0}), Tensor()};  // [2, 3] -> [3]: not x's shape
  }
};

struct GradForNumber : autograd::Function<GradForNumber> {
  static Tensor forward(autograd::AutogradContext*, const Tensor& x, double) { return x * 2.0; }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    return {grads[0] * 2.0, grads[0]};
  }
};

struct WrongDevice : autograd::Function<WrongDevice> {
  static Tensor forward(autograd::AutogradContext*, const Tensor& x) { return x * 2.0; }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    return {grads[0].to(Device("meta"))};
  }
};

struct WrongDtype : autograd::Function<WrongDtype> {
  static Tensor forward(autograd::AutogradContext*, const Tensor& x) { return x * 2.0; }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    return {(grads[0] * 2.0).to(DType::Float32)};
  }
};

TEST_CASE("custom function: wrong gradients from backward are typed errors naming the function") {
  Tensor x = randn({2, 3}, kF64).requires_grad_();
  Tensor y = randn({2, 3}, kF64).requires_grad_();
  CHECK_THROWS_WITH_AS(
      WrongCount<1>::apply(x, y).sum().backward(),
      doctest::Contains("WrongCount: backward returned 1 gradients, but forward has 2 input positions"), ValueError);
  CHECK_THROWS_WITH_AS(WrongCount<3>::apply(x, y).sum().backward(),
                       doctest::Contains("WrongCount: backward returned 3 gradients"), ValueError);
  CHECK_FALSE(x.grad().defined());
  CHECK_THROWS_WITH_AS(WrongShape::apply(x, 1.0).sum().backward(),
                       doctest::Contains("WrongShape returned an invalid gradient at index 0: got shape [3] but "
                                         "expected shape compatible with [2, 3]"),
                       ValueError);
  CHECK_THROWS_WITH_AS(GradForNumber::apply(x, 1.0).sum().backward(),
                       doctest::Contains("GradForNumber: backward returned a gradient at index 1, but forward's input "
                                         "1 is not a tensor"),
                       ValueError);
  CHECK_THROWS_WITH_AS(WrongDevice::apply(x).sum().backward(),
                       doctest::Contains("WrongDevice returned an invalid gradient at index 0: expected device cpu"),
                       ValueError);
  CHECK_FALSE(x.grad().defined());
  // Another dtype is cast to the input's, as for every gradient the engine passes on.
  WrongDtype::apply(x).sum().backward();
  CHECK(x.grad().dtype() == DType::Float64);
  CHECK(values(x.grad()) == std::vector<double>(6, 2.0));
}

TEST_CASE("custom function: misuse of the context is a typed error naming the function") {
  struct SavesOutputInData : autograd::Function<SavesOutputInData> {
    static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
      Tensor y = x * 2.0;
      ctx->saved_data["y"] = y;
      return y;
    }
    static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) { return g; }
  };
  Tensor x = randn({3}, kF64).requires_grad_();
  CHECK_THROWS_WITH_AS(SavesOutputInData::apply(x), doctest::Contains("saved_data[\"y\"] holds an output"), ValueError);

  struct SavesTwice : autograd::Function<SavesTwice> {
    static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
      ctx->save_for_backward({x});
      ctx->save_for_backward({x});
      return x * 2.0;
    }
    static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) { return g; }
  };
  CHECK_THROWS_WITH_AS(SavesTwice::apply(x), doctest::Contains("save_for_backward was called twice"), ValueError);

  struct ReadsInForward : autograd::Function<ReadsInForward> {
    static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
      ctx->get_saved_variables();
      return x;
    }
    static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) { return g; }
  };
  CHECK_THROWS_WITH_AS(ReadsInForward::apply(x), doctest::Contains("get_saved_variables is for backward"), ValueError);

  struct UndefinedOutput : autograd::Function<UndefinedOutput> {
    static Tensor forward(autograd::AutogradContext*, const Tensor&) { return Tensor(); }
    static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) { return g; }
  };
  CHECK_THROWS_WITH_AS(UndefinedOutput::apply(x), doctest::Contains("UndefinedOutput: forward returned an undefined"),
                       ValueError);

  struct NotAnOutput : autograd::Function<NotAnOutput> {
    static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
      ctx->mark_non_differentiable({x});
      return x * 2.0;
    }
    static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) { return g; }
  };
  CHECK_THROWS_WITH_AS(NotAnOutput::apply(x), doctest::Contains("mark_non_differentiable takes outputs"), ValueError);

  struct Throws : autograd::Function<Throws> {
    static Tensor forward(autograd::AutogradContext*, const Tensor&) { ANATOMY_THROW(ValueError, "from forward"); }
    static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list g) { return g; }
  };
  CHECK_THROWS_WITH_AS(Throws::apply(x), doctest::Contains("from forward"), ValueError);
  CHECK(autograd::GradMode::is_enabled());  // forward's grad mode was restored
}

// ---- names, anomaly mode, threads ----

struct NanBackward : autograd::Function<NanBackward> {
  static std::string name() { return "MyNanFunction"; }
  static Tensor forward(autograd::AutogradContext*, const Tensor& x) { return x * 1.0; }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    return {grads[0] * std::numeric_limits<double>::quiet_NaN()};
  }
};

TEST_CASE("custom function: a given name shows in the graph and in anomaly mode") {
  Tensor x = randn({2}, kF64).requires_grad_();
  autograd::DetectAnomalyGuard anomaly;
  Tensor y = NanBackward::apply(x);
  CHECK(y.grad_fn()->name() == "MyNanFunction");
  CHECK(y.grad_fn()->forward_op() == "MyNanFunction");
  CHECK_THROWS_WITH_AS(y.sum().backward(),
                       doctest::Contains("MyNanFunction returned nan values in its output (the forward op was "
                                         "MyNanFunction)"),
                       ValueError);
}

TEST_CASE("custom function: several threads apply and differentiate at once") {
  constexpr int kThreads = 4;
  Tensor shared = randn({8}, kF64).requires_grad_();
  std::vector<Tensor> own(kThreads), grads(kThreads);
  for (auto& t : own) t = randn({8}, kF64).requires_grad_();
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 20; ++k) {
        Tensor y = ScaledExp::apply(MulAdd::apply(own[i], 0.5, shared), 0.1).sum();
        grads[i] = autograd::grad({y}, {own[i]})[0];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    Tensor y = ScaledExp::apply(MulAdd::apply(own[i], 0.5, shared), 0.1).sum();
    CHECK(allclose(grads[i], autograd::grad({y}, {own[i]})[0]));
  }
}

}  // namespace
