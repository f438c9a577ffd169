// Element-wise unary operators: exact values and rules the op table does not express (special
// values, dtype rules of the in-place and out= forms, operators, the Meta backend).
#include <cmath>
#include <limits>

#include "test_util.h"

using namespace anatomy;
using anatomy_test::D;
using anatomy_test::V;
using anatomy_test::values;

namespace {
const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
Tensor f64(const D& v) { return tensor(v, {static_cast<int64_t>(v.size())}, DType::Float64); }
}  // namespace

TEST_CASE("unary: round is half to even, the other roundings as in C") {
  Tensor x = tensor({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6, -2.6});
  CHECK(values(x.round()) == D{-2, -2, -0, 0, 2, 2, 3, -3});
  CHECK(values(x.floor()) == D{-3, -2, -1, 0, 1, 2, 2, -3});
  CHECK(values(x.ceil()) == D{-2, -1, -0, 1, 2, 3, 3, -2});
  CHECK(values(x.trunc()) == D{-2, -1, -0, 0, 1, 2, 2, -2});
  // Integers are left as they are, in their dtype.
  Tensor i = tensor({-3, 4});
  CHECK(i.round().dtype() == DType::Int64);
  CHECK(values(i.floor()) == D{-3, 4});
}

TEST_CASE("unary: sign keeps NaN, relu propagates it") {
  D s = values(f64({kNan, -kInf, -2, -0.0, 0, 3}).sign());
  CHECK(std::isnan(s[0]));
  CHECK(D(s.begin() + 1, s.end()) == D{-1, -1, 0, 0, 1});
  D r = values(f64({kNan, -1, 2}).relu());
  CHECK(std::isnan(r[0]));
  CHECK(D(r.begin() + 1, r.end()) == D{0, 2});
  CHECK(values(tensor({true, false}).sign()) == D{1, 0});
}

TEST_CASE("unary: floating functions of integers give fp32, predicates give bool") {
  Tensor i = tensor({1, 4});
  CHECK(i.sqrt().dtype() == DType::Float32);
  CHECK(values(i.sqrt()) == D{1, 2});
  CHECK(tensor({true}).exp().dtype() == DType::Float32);
  CHECK(tensor(std::vector<double>{1, 4}, {2}, DType::Float16).sqrt().dtype() == DType::Float16);
  CHECK(values(i.isnan()) == D{0, 0});
  CHECK(values(i.isfinite()) == D{1, 1});
  CHECK(i.isinf().dtype() == DType::Bool);
  CHECK(values(f64({kNan, kInf, -kInf, 1}).isinf()) == D{0, 1, 1, 0});
  CHECK(values(f64({kNan, kInf, -kInf, 1}).isfinite()) == D{0, 0, 0, 1});
}

TEST_CASE("unary: in-place forms keep the dtype, or refuse") {
  Tensor i = tensor({1, 2});
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.exp_(), "exp", "int64");
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.sigmoid_(), "sigmoid");
  Tensor b = tensor({true, false});
  EXPECT_ERROR_UNCHANGED(b, TypeError, b.neg_(), "neg", "bool");
  EXPECT_ERROR_UNCHANGED(b, TypeError, -b, "neg", "bool");
  Tensor f = tensor({1.5, -2.0});
  EXPECT_ERROR_UNCHANGED(f, TypeError, ~f, "bitwise_not", "fp32");
  EXPECT_ERROR_UNCHANGED(f, ValueError, gelu_(f, "erf"), "gelu", "erf");
  Tensor ints = tensor({1, 2});
  EXPECT_ERROR_UNCHANGED(ints, TypeError, softplus(ints), "softplus", "int64");
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.sinh_(), "sinh", "int64");
  EXPECT_ERROR_UNCHANGED(f, TypeError, f.bitwise_not_(), "bitwise_not", "fp32");
  // logical_not_ writes 0 and 1 in the tensor's own dtype; the method is the function.
  Tensor g = tensor({0.0, 2.5});
  logical_not_(g);
  CHECK(g.dtype() == DType::Float32);
  CHECK(values(g) == D{1, 0});
  CHECK(&g.logical_not_() == &g);
  CHECK(values(g) == D{0, 1});
  Tensor bits = tensor({0, 5});
  bits.bitwise_not_();
  CHECK(values(bits) == D{-1, -6});
  const uint32_t v = f.version();
  f.abs_();
  CHECK(f.version() > v);
  CHECK(values(f) == D{1.5, 2});
}

TEST_CASE("unary: out= checks its shape and casts into its dtype") {
  Tensor x = tensor({1, -2, 3});
  Tensor wrong = zeros({2});
  EXPECT_ERROR_UNCHANGED(wrong, ValueError, neg_out(wrong, x), "neg", "[2]", "[3]");
  Tensor i32 = zeros({3}, TensorOptions().dtype(DType::Int32));
  EXPECT_ERROR_UNCHANGED(i32, TypeError, exp_out(i32, x), "exp");
  Tensor d = zeros({3}, TensorOptions().dtype(DType::Float64));
  Tensor r = neg_out(d, x);
  CHECK(r.data_ptr() == d.data_ptr());
  CHECK(values(d) == D{-1, 2, -3});
  Tensor bools = zeros({3}, TensorOptions().dtype(DType::Int64));
  logical_not_out(bools, tensor({0, 5, 0}));
  CHECK(values(bools) == D{1, 0, 1});
  // An output overlapping its input other than exactly is refused.
  Tensor y = tensor({1.0, 2.0, 3.0, 4.0});
  EXPECT_ERROR_UNCHANGED(y, ValueError, exp_out(y.slice(0, 1, 4), y.slice(0, 0, 3)), "exp", "overlap");
}

TEST_CASE("unary: operators and integer rules") {
  Tensor i = tensor({5, -3, 0});
  CHECK(values(-i) == D{-5, 3, 0});
  CHECK(values(~i) == D{-6, 2, -1});
  CHECK(values(!i) == D{0, 0, 1});
  CHECK(values(~tensor({true, false})) == D{0, 1});
  CHECK(values(i.abs()) == D{5, 3, 0});
  CHECK(values(i.sign()) == D{1, -1, 0});
  CHECK(values(i.relu()) == D{5, 0, 0});
  // uint8 negation wraps, as in PyTorch.
  Tensor u = tensor(std::vector<double>{1, 0, 200}, {3}, DType::UInt8);
  CHECK(values(-u) == D{255, 0, 56});
  CHECK(values(i.reciprocal()) == D{0.2f, -1 / 3.0f, kInf});
}

TEST_CASE("unary: nan_to_num defaults to the dtype's extremes") {
  Tensor x = tensor({kNan, kInf, -kInf, 1.0}, TensorOptions().dtype(DType::Float32));
  CHECK(values(x.nan_to_num()) == D{0, std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(), 1});
  CHECK(values(x.to(DType::Float16).nan_to_num()) == D{0, 65504, -65504, 1});
  CHECK(values(x.nan_to_num(2, 3, -4)) == D{2, 3, -4, 1});
  nan_to_num_(x, std::nullopt, 9.0);
  CHECK(values(x) == D{0, 9, std::numeric_limits<float>::lowest(), 1});
}

TEST_CASE("unary: gelu, softplus and the logistic functions at special values") {
  Tensor x = f64({0, 1, -kInf, kInf});
  D s = values(x.sigmoid());
  CHECK(s == D{0.5, 1 / (1 + std::exp(-1.0)), 0, 1});
  CHECK(values(f64({0, kInf}).silu()) == D{0, kInf});
  CHECK(values(f64({0, kInf}).gelu()) == D{0, kInf});
  CHECK(values(f64({0, kInf}).gelu("tanh")) == D{0, kInf});
  // Above the threshold softplus is x itself; below, log1p(exp(beta x)) / beta.
  CHECK(values(f64({30}).softplus()) == D{30});
  CHECK(values(f64({1}).softplus(2, 1)) == D{1});
  CHECK(values(f64({0}).softplus(2, 20))[0] == doctest::Approx(std::log(2.0) / 2));
}

TEST_CASE("unary: the Meta backend gives shapes and dtypes only") {
  auto meta = [](DType t) { return TensorOptions().device(Device("meta")).dtype(t); };
  Tensor m = empty({4, 3}, meta(DType::Int32));
  Tensor e = m.exp();
  CHECK(e.device().type() == DeviceType::Meta);
  CHECK(e.dtype() == DType::Float32);
  CHECK(V(e.sizes().begin(), e.sizes().end()) == V{4, 3});
  CHECK(m.isnan().dtype() == DType::Bool);
  CHECK(m.neg().dtype() == DType::Int32);
  EXPECT_ERROR(TypeError, empty({2}, meta(DType::Bool)).neg(), "neg");
  EXPECT_ERROR(TypeError, empty({2}, meta(DType::Float32)).bitwise_not(), "bitwise_not");
}

TEST_CASE("unary: erfinv, digamma, lgamma and polygamma at their special values, as PyTorch's") {
  const double pi = 3.14159265358979323846;
  D e = values(f64({-1, 1, 0, -0.0, 1.5, -2, kNan, 0.5}).erfinv());
  CHECK(D(e.begin(), e.begin() + 2) == D{-kInf, kInf});
  CHECK((e[2] == 0 && !std::signbit(e[2]) && e[3] == 0 && std::signbit(e[3])));
  CHECK((std::isnan(e[4]) && std::isnan(e[5]) && std::isnan(e[6])));
  CHECK(e[7] == doctest::Approx(0.47693627620446987338).epsilon(1e-15));
  // erf(erfinv(y)) is y, near the ends too.
  for (double y : {0.999999, -0.3, 1e-300, 0.9999999999}) {
    CHECK(std::erf(values(f64({y}).erfinv())[0]) == doctest::Approx(y).epsilon(1e-15));
  }
  CHECK(values(tensor({-1.0, 1.0}).erfinv()) == D{-kInf, kInf});  // fp32
  CHECK(values(tensor({0.5, 0.0}).erfinv())[0] == doctest::Approx(0.4769362762).epsilon(1e-6));

  // digamma: -inf at +0 and +inf at -0, NaN at the negative integers and -inf.
  D d = values(f64({0, -0.0, -1, -2, kInf, -kInf, 1, 0.5, -0.5, 10}).digamma());
  CHECK(D(d.begin(), d.begin() + 2) == D{-kInf, kInf});
  CHECK((std::isnan(d[2]) && std::isnan(d[3]) && d[4] == kInf && std::isnan(d[5])));
  CHECK(d[6] == doctest::Approx(-0.57721566490153286061).epsilon(1e-15));
  CHECK(d[7] == doctest::Approx(-1.96351002602142347944).epsilon(1e-15));
  CHECK(d[8] == doctest::Approx(0.03648997397857652056).epsilon(1e-13));
  CHECK(d[9] == doctest::Approx(2.25175258906672110764).epsilon(1e-15));
  CHECK(values(tensor({0, -3, 1}).digamma())[0] == -kInf);  // integers compute in fp32

  // lgamma: inf at the poles and at both infinities.
  D l = values(f64({0, -1, -kInf, kInf, 1, 0.5, -0.5}).lgamma());
  CHECK(D(l.begin(), l.begin() + 5) == D{kInf, kInf, kInf, kInf, 0});
  CHECK(l[5] == doctest::Approx(0.5 * std::log(pi)).epsilon(1e-15));
  CHECK(l[6] == doctest::Approx(std::log(2 * std::sqrt(pi))).epsilon(1e-15));

  // polygamma(1, 1) = pi^2 / 6, polygamma(2, 1) = -2 zeta(3); poles give inf; n = 0 is digamma.
  CHECK(values(polygamma(1, f64({1})))[0] == doctest::Approx(pi * pi / 6).epsilon(1e-14));
  CHECK(values(polygamma(2, f64({1})))[0] == doctest::Approx(-2.40411380631918857080).epsilon(1e-14));
  CHECK(values(polygamma(1, f64({0, -2}))) == D{kInf, kInf});
  CHECK(values(polygamma(2, f64({0, kInf}))) == D{-kInf, 0});
  CHECK(values(polygamma(0, f64({0.5}))) == values(f64({0.5}).digamma()));
  Tensor x = f64({1, 2});
  EXPECT_ERROR_UNCHANGED(x, ValueError, polygamma_(x, -1), "polygamma", "-1");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.polygamma(-2), "polygamma", "-2");
}

TEST_CASE("unary: the inverse trigonometric and hyperbolic functions, log10, erfc, frac and square") {
  D a = values(f64({2, -1, 1}).asin());
  CHECK(std::isnan(a[0]));
  CHECK(D(a.begin() + 1, a.end()) == D{-std::asin(1.0), std::asin(1.0)});
  CHECK(std::isnan(values(f64({0.5}).acosh())[0]));
  CHECK(values(f64({1, -1}).atanh()) == D{kInf, -kInf});
  CHECK(values(f64({kInf, -kInf}).atan()) == D{std::atan(kInf), -std::atan(kInf)});
  CHECK(values(f64({100, 1000}).log10()) == D{2, 3});
  CHECK(tensor({100}).log10().dtype() == DType::Float32);
  CHECK(values(f64({-kInf, kInf, 0}).erfc()) == D{2, 0, 1});
  // frac keeps the sign and gives NaN at the infinities; floating tensors only.
  D f = values(f64({2.5, -2.5, kInf, -0.0}).frac());
  CHECK(D{f[0], f[1]} == D{0.5, -0.5});
  CHECK((std::isnan(f[2]) && f[3] == 0));
  Tensor i = tensor({1, 2});
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.frac(), "frac", "int64");
  // square keeps integer dtypes and wraps; bool is refused (PyTorch's pow(bool, 2) gives int64).
  Tensor i8 = tensor(std::vector<double>{20, -3}, {2}, DType::Int8);
  CHECK(i8.square().dtype() == DType::Int8);
  CHECK(values(i8.square()) == D{-112, 9});
  Tensor b = tensor({true, false});
  EXPECT_ERROR_UNCHANGED(b, TypeError, b.square_(), "square", "bool");
}

TEST_CASE("unary: signbit, isposinf and isneginf give bool, and write bool only") {
  Tensor x = f64({-0.0, 0.0, -1, kNan, -kNan, kInf, -kInf});
  CHECK(values(x.signbit()) == D{1, 0, 1, 0, 1, 0, 1});
  CHECK(values(x.isposinf()) == D{0, 0, 0, 0, 0, 1, 0});
  CHECK(values(x.isneginf()) == D{0, 0, 0, 0, 0, 0, 1});
  Tensor i = tensor({-1, 0, 3});
  CHECK(i.signbit().dtype() == DType::Bool);
  CHECK(values(i.signbit()) == D{1, 0, 0});
  CHECK(values(i.isposinf()) == D{0, 0, 0});
  CHECK(values(tensor({true}).signbit()) == D{0});
  Tensor out = zeros({7}, TensorOptions().dtype(DType::Bool));
  isneginf_out(out, x);
  CHECK(values(out) == D{0, 0, 0, 0, 0, 0, 1});
  Tensor f = zeros({7});
  EXPECT_ERROR_UNCHANGED(f, TypeError, signbit_out(f, x), "signbit", "bool");
  EXPECT_ERROR_UNCHANGED(f, TypeError, isposinf_out(f, x), "isposinf", "bool");
}

TEST_CASE("unary: logit's eps, and the activations' defaults") {
  D l = values(f64({0, 1, 0.5, -0.1}).logit());
  CHECK(D(l.begin(), l.begin() + 3) == D{-kInf, kInf, 0});
  CHECK(std::isnan(l[3]));
  // eps clamps into [eps, 1 - eps] first.
  D c = values(f64({0, 1, -5}).logit(0.25));
  CHECK(c[0] == doctest::Approx(-std::log(3.0)));
  CHECK(c[1] == doctest::Approx(std::log(3.0)));
  CHECK(c[2] == c[0]);
  CHECK(tensor({0, 1}).logit().dtype() == DType::Float32);

  Tensor x = f64({-2, 0, 3});
  CHECK(values(leaky_relu(x)) == D{-0.02, 0, 3});
  CHECK(values(hardtanh(x)) == D{-1, 0, 1});
  CHECK(values(hardtanh(tensor({-5, 0, 5}))) == D{-1, 0, 1});
  CHECK(hardtanh(tensor({-5, 0, 5})).dtype() == DType::Int64);
  CHECK(values(elu(x)) == D{std::expm1(-2.0), 0, 3});
  const double scale = 1.0507009873554804934, alpha = 1.6732632423543772848;
  D s = values(selu(x));
  CHECK(s[0] == doctest::Approx(scale * alpha * std::expm1(-2.0)).epsilon(1e-15));
  CHECK(s[2] == doctest::Approx(3 * scale).epsilon(1e-15));
  CHECK(values(f64({-3, 3, 0}).hardswish()) == D{0, 3, 0});
  CHECK(values(f64({-3, 3, 0}).hardsigmoid()) == D{0, 1, 0.5});
  CHECK(values(f64({0, kInf}).mish()) == D{0, kInf});
  D n = values(f64({kNan}).hardswish());
  CHECK(std::isnan(n[0]));
  Tensor b = tensor({true});
  EXPECT_ERROR_UNCHANGED(b, TypeError, hardtanh_(b), "hardtanh", "bool");
  Tensor ints = tensor({-5, 5});
  EXPECT_ERROR_UNCHANGED(ints, ValueError, hardtanh_(ints, kNan, 1), "hardtanh", "nan");
  Tensor i = tensor({1, 2});
  EXPECT_ERROR_UNCHANGED(i, TypeError, leaky_relu_(i), "leaky_relu", "int64");
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.mish_(), "mish", "int64");
  EXPECT_ERROR_UNCHANGED(i, TypeError, selu_(i), "selu", "int64");
}

TEST_CASE("unary: the Meta backend gives the new operators' dtypes") {
  auto meta = [](DType t) { return TensorOptions().device(Device("meta")).dtype(t); };
  Tensor m = empty({4, 3}, meta(DType::Int32));
  CHECK(m.square().dtype() == DType::Int32);
  CHECK(m.lgamma().dtype() == DType::Float32);
  CHECK(m.signbit().dtype() == DType::Bool);
  CHECK(polygamma(1, m).dtype() == DType::Float32);
  CHECK(hardtanh(m).dtype() == DType::Int32);
  EXPECT_ERROR(TypeError, empty({2}, meta(DType::Int64)).frac(), "frac");
  EXPECT_ERROR(ValueError, polygamma(-1, m), "polygamma");
}
