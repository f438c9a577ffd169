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
