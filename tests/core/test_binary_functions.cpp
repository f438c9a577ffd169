// The binary and ternary functions beyond add/sub/mul/div: exact values the op table's random
// samples would only hit by chance (signs of remainder and floor division, the integer edge
// cases that must not crash, shift widths, NaN propagation), the Scalar overloads and
// operators, bad inputs, and the Meta backend.
#include <cmath>
#include <limits>
#include <sstream>

#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("binary functions: division rounding modes and remainder signs") {
  Tensor a = tensor({7, -7, 7, -7}), b = tensor({2, 2, -2, -2});
  CHECK(values(div(a, b, "trunc")) == D{3, -3, -3, 3});
  CHECK(values(div(a, b, "floor")) == D{3, -4, -4, 3});
  CHECK(div(a, b, "floor").dtype() == DType::Int64);
  CHECK(div(a, b, std::nullopt).dtype() == DType::Float32);  // None: true division
  CHECK(values(a % b) == D{1, 1, -1, -1});                   // the divisor's sign (Python)
  CHECK(values(fmod(a, b)) == D{1, -1, 1, -1});              // the dividend's sign (C)
  Tensor f = tensor({7.5, -7.5}), g = tensor({2.0, 2.0});
  CHECK(values(div(f, g, "floor")) == D{3, -4});
  CHECK(values(f % g) == D{1.5, 0.5});
  CHECK(values(fmod(f, g)) == D{1.5, -1.5});
  // Float division by zero follows IEEE in every mode.
  CHECK(values(div(tensor({1.0, -1.0}), tensor({0.0, 0.0}), "floor")) == D{kInf, -kInf});
  CHECK(std::isnan(values(div(tensor({0.0}), tensor({0.0}), "trunc"))[0]));
  // The quotient that overflows (INT_MIN / -1) wraps instead of trapping.
  const int64_t lo = std::numeric_limits<int64_t>::min();
  Tensor m = tensor({lo, lo}), neg1 = tensor({int64_t{-1}, int64_t{-1}});
  CHECK(values(div(m, neg1, "trunc")) == values(m));
  CHECK(values(m % neg1) == D{0, 0});
  CHECK(values(fmod(tensor({-128}, DType::Int8), tensor({-1}, DType::Int8))) == D{0});
}

TEST_CASE("binary functions: integer division by zero raises before writing") {
  Tensor a = tensor({6, 7, 8}), z = tensor({1, 0, 2});
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.div_(z, "trunc"), "div", "division by zero");
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.remainder_(z), "remainder", "division by zero");
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.fmod_(0), "fmod", "division by zero");
  Tensor out = zeros({3}, DType::Int64);
  EXPECT_ERROR_UNCHANGED(out, ValueError, div_out(out, a, z, "floor"), "div");
  EXPECT_ERROR_UNCHANGED(a, ValueError, div(a, z, "round"), "div", "rounding_mode", "round");
  EXPECT_ERROR_UNCHANGED(a, ValueError, a.div_(ones({3}), "ceil"), "div", "ceil");
  EXPECT_ERROR_UNCHANGED(a, TypeError, a.div_(tensor({2, 2, 2})), "div", "fp32", "int64");  // true division
}

TEST_CASE("binary functions: floor_divide is div with rounding_mode 'floor'") {
  Tensor a = tensor({7, -7, 7, -7, -1}), b = tensor({2, 2, -2, -2, 3});
  CHECK(values(floor_divide(a, b)) == D{3, -4, -4, 3, -1});
  CHECK(values(floor_divide(a, b)) == values(div(a, b, "floor")));
  CHECK(floor_divide(a, b).dtype() == DType::Int64);
  CHECK(values(floor_divide(tensor({-7}, DType::Int8), 2)) == D{-4});
  CHECK(floor_divide(a, 2.0).dtype() == DType::Float32);  // a float Scalar lifts integers
  CHECK(values(floor_divide(tensor({7.5, -7.5}), 2.0)) == D{3, -4});
  // Float division by zero follows IEEE; an integer zero divisor raises before writing.
  CHECK(values(floor_divide(tensor({1.0, -1.0}), 0.0)) == D{kInf, -kInf});
  CHECK(std::isnan(values(floor_divide(tensor({0.0}), 0.0))[0]));
  Tensor x = tensor({6, -7, 8});
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.floor_divide_(tensor({1, 0, 2})), "floor_divide", "division by zero");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.floor_divide_(0), "floor_divide", "division by zero");
  Tensor out = zeros({3}, DType::Int64);
  EXPECT_ERROR_UNCHANGED(out, ValueError, floor_divide_out(out, x, tensor({0, 1, 1})), "floor_divide");
  EXPECT_ERROR(TypeError, floor_divide(tensor({true}), tensor({true})), "floor_divide", "bool");
  const int64_t lo = std::numeric_limits<int64_t>::min();
  CHECK(values(floor_divide(tensor({lo}), tensor({int64_t{-1}}))) == values(tensor({lo})));  // wraps
}

TEST_CASE("binary functions: logaddexp, logaddexp2, xlogy and copysign edge values") {
  // logaddexp with infinities of both signs: equal infinities give themselves (not inf - inf).
  D l = values(
      logaddexp(tensor({kInf, -kInf, kInf, -kInf, 1000.0, kNaN}), tensor({kInf, -kInf, -kInf, 2.0, 1000.0, 0.0})));
  CHECK(l[0] == kInf);
  CHECK(l[1] == -kInf);
  CHECK(l[2] == kInf);
  CHECK(l[3] == 2.0);
  CHECK(l[4] == doctest::Approx(1000.0 + std::log(2.0)));  // no overflow of exp(1000)
  CHECK(std::isnan(l[5]));
  D l2 = values(
      logaddexp2(tensor({kInf, -kInf, 3.0, -kInf}, DType::Float64), tensor({kInf, -kInf, 3.0, 5.0}, DType::Float64)));
  CHECK(l2[0] == kInf);
  CHECK(l2[1] == -kInf);
  CHECK(l2[2] == doctest::Approx(4.0));
  CHECK(l2[3] == 5.0);
  EXPECT_ERROR(TypeError, logaddexp(tensor({1, 2}), tensor({1, 2})), "logaddexp", "int64");
  EXPECT_ERROR(TypeError, logaddexp2(tensor({true}), tensor({false})), "logaddexp2", "bool");

  // xlogy: 0 where x == 0, even for y = 0 or inf, unless y is NaN.
  D xl = values(xlogy(tensor({0.0, 0.0, 0.0, 2.0, kNaN, 3.0}), tensor({0.0, kInf, kNaN, 1.0, 1.0, 0.0})));
  CHECK(xl[0] == 0);
  CHECK(xl[1] == 0);
  CHECK(std::isnan(xl[2]));
  CHECK(xl[3] == 0);
  CHECK(std::isnan(xl[4]));
  CHECK(xl[5] == -kInf);
  CHECK(xlogy(tensor({1, 2}), tensor({1, 2})).dtype() == DType::Float32);  // integers promote
  D xs = values(xlogy(2, tensor({1.0, std::exp(1.0)}, DType::Float64)));   // xlogy.Scalar_Self
  CHECK(xs[0] == 0);
  CHECK(xs[1] == doctest::Approx(2.0));
  CHECK(values(xlogy(tensor({0.0, 3.0}, DType::Float64), 1.0)) == D{0, 0});
  Tensor i = tensor({1, 2});
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.xlogy_(tensor({1, 2})), "xlogy", "fp32", "int64");

  // copysign: the sign bit of other, -0.0 and NaN included; integers promote to float.
  D c = values(copysign(tensor({1.0, 1.0, -2.0, 0.0, kNaN}), tensor({-0.0, 0.0, kInf, -1.0, -1.0})));
  CHECK(c[0] == -1.0);
  CHECK(c[1] == 1.0);
  CHECK(c[2] == 2.0);
  CHECK((c[3] == 0.0 && std::signbit(c[3])));
  CHECK((std::isnan(c[4]) && std::signbit(c[4])));
  CHECK(std::signbit(values(copysign(tensor({3.0}), tensor({-kNaN})))[0]));
  Tensor ci = copysign(tensor({1, -2, 3}), tensor({-1, 1, 0}));
  CHECK(ci.dtype() == DType::Float32);
  CHECK(values(ci) == D{-1, 2, 3});
}

TEST_CASE("binary functions: clamp_min, clamp_max, max and min of two tensors, addcmul and addcdiv") {
  Tensor a = tensor({1.0, kNaN, 3.0}), b = tensor({2.0, 0.0, kNaN});
  D cmin = values(clamp_min(a, b)), cmax = values(clamp_max(a, b));
  CHECK(cmin[0] == 2);
  CHECK(std::isnan(cmin[1]));
  CHECK(std::isnan(cmin[2]));
  CHECK(cmax[0] == 1);
  CHECK(std::isnan(cmax[2]));
  Tensor x = tensor({-3, 0, 5});
  x.clamp_min_(tensor({-1, 1, 1}));
  CHECK(values(x) == D{-1, 1, 5});
  x.clamp_max_(2);
  CHECK(values(x) == D{-1, 1, 2});
  EXPECT_ERROR_UNCHANGED(x, TypeError, x.clamp_min_(0.5), "clamp_min", "int64");  // fp32 result into int64
  D mx = values(max(a, b)), mn = values(min(a, b));
  CHECK(mx[0] == 2);
  CHECK(std::isnan(mx[1]));
  CHECK(mn[0] == 1);
  CHECK(std::isnan(mn[2]));
  CHECK(values(a.max(tensor({5.0}))).size() == 3);
  CHECK(values(tensor({1, 5}).max()) == D{5});           // the reduction keeps its overload
  CHECK(std::get<0>(tensor({1, 5}).max(0)).dim() == 0);  // and max(dim)
  CHECK(values(max(tensor({true, false}), tensor({false, false}))) == D{1, 0});
  EXPECT_ERROR(ValueError, max(zeros({2}), zeros({3})), "max", "[2]", "[3]");

  Tensor s = tensor({1.0, 2.0}), t1 = tensor({3.0, 4.0}), t2 = tensor({2.0, 8.0});
  CHECK(values(addcmul(s, t1, t2)) == D{7, 34});
  CHECK(values(addcmul(s, t1, t2, 0.5)) == D{4, 18});
  CHECK(values(addcdiv(s, t1, t2, -2)) == D{-2, 1});
  CHECK(values(tensor({1, 2}).addcmul(tensor({3, 4}), tensor({2, 2}), 3)) == D{19, 26});
  CHECK(addcdiv(tensor({1, 2}), tensor({3, 4}), tensor({2.0, 2.0})).dtype() == DType::Float32);
  Tensor y = tensor({1.0, 1.0});
  y.addcdiv_(tensor({1.0, 3.0}), tensor({4.0, 4.0}));
  CHECK(values(y) == D{1.25, 1.75});
  Tensor xi = tensor({1, 2});
  EXPECT_ERROR_UNCHANGED(xi, TypeError, xi.addcdiv_(tensor({1, 2}), tensor({3, 4})), "addcdiv", "int64");
  EXPECT_ERROR_UNCHANGED(xi, TypeError, xi.addcmul_(xi, xi, 0.5), "addcmul", "value", "0.5");
  EXPECT_ERROR_UNCHANGED(xi, ValueError, xi.addcmul_(xi, zeros({3}, DType::Int64)), "addcmul", "[2]", "[3]");
}

TEST_CASE("binary functions: isin sorts instead of comparing every pair") {
  // NaN is found nowhere; -0.0 equals 0.0; repeats in either tensor are fine.
  Tensor e = tensor({1.0, 2.0, kNaN, 4.0, -0.0, 1.0});
  Tensor t = tensor({4.0, kNaN, 1.0, 1.0, 0.0});
  CHECK(values(isin(e, t)) == D{1, 0, 0, 1, 1, 1});
  CHECK(values(isin(e, t, /*assume_unique=*/false, /*invert=*/true)) == D{0, 1, 1, 0, 0, 0});
  CHECK(isin(e, t).dtype() == DType::Bool);
  CHECK(values(isin(tensor({1, 5, 3}), tensor({3.0, 1.5}))) == D{0, 0, 1});  // compared after promotion
  Tensor grid = arange(4).view({2, 2});
  Tensor g = isin(grid, tensor({3, 0, 3}));
  CHECK(vec(g.sizes()) == V{2, 2});
  CHECK(values(g) == D{1, 0, 0, 1});
  CHECK(values(isin(grid.t(), tensor({1}))) == D{0, 0, 1, 0});  // a transposed view
  CHECK(values(isin(tensor({1, 2}), 2)) == D{0, 1});
  CHECK(values(isin(tensor({1, 2}), 2, false, true)) == D{1, 0});
  Tensor s = isin(2, tensor({1, 2}));
  CHECK(s.dim() == 0);
  CHECK(values(s) == D{1});
  CHECK(values(isin(tensor({true, false}), tensor({true}))) == D{1, 0});
  CHECK(isin(empty({0}), tensor({1.0})).numel() == 0);
  CHECK(values(isin(tensor({1.0, 2.0}), empty({0}))) == D{0, 0});
  CHECK(values(isin(tensor({1.0, 2.0}), empty({0}), false, true)) == D{1, 1});
  // 200000 x 200000 would be 4e10 comparisons; the sort takes a moment.
  Tensor big = arange(200000);
  Tensor hits = isin(big, big * 2);
  CHECK(hits.sum().item<int64_t>() == 100000);
  EXPECT_ERROR(DeviceError, isin(tensor({1.0}), empty({3}, Device("meta"))), "isin", "cpu", "meta");
  Tensor m = isin(empty({3, 2}, Device("meta")), empty({4}, Device("meta")));
  CHECK(m.is_meta());
  CHECK(vec(m.sizes()) == V{3, 2});
  CHECK(m.dtype() == DType::Bool);
}

TEST_CASE("binary functions: pow forms and integer exponents") {
  Tensor i = tensor({2, 3, -2});
  CHECK(values(pow(i, 3)) == D{8, 27, -8});
  CHECK(pow(i, 3).dtype() == DType::Int64);
  CHECK(pow(i, 0.5).dtype() == DType::Float32);  // a float exponent lifts integers
  CHECK(values(pow(2, tensor({0, 1, 10}))) == D{1, 2, 1024});
  CHECK(pow(2, tensor({0, 1, 10})).dtype() == DType::Int64);
  CHECK(pow(2.0, tensor({1, 2})).dtype() == DType::Float32);
  CHECK(values(pow(tensor({100}, DType::Int8), 2)) == D{16});  // 10000 wraps in int8
  EXPECT_ERROR_UNCHANGED(i, ValueError, i.pow_(-1), "pow", "Integers to negative integer powers are not allowed");
  EXPECT_ERROR_UNCHANGED(i, ValueError, pow(i, tensor({1, -2, 1})), "pow");
  Tensor f = tensor({4.0, -8.0});
  CHECK(values(pow(f, -1)) == D{0.25, -0.125});  // floats take negative exponents
  EXPECT_ERROR(TypeError, pow(tensor({true}), tensor({true})), "pow", "bool");
}

TEST_CASE("binary functions: maximum, minimum and clamp propagate NaN") {
  Tensor a = tensor({1.0, kNaN, 3.0}), b = tensor({2.0, 0.0, kNaN});
  D mx = values(maximum(a, b)), mn = values(minimum(a, b));
  CHECK(mx[0] == 2);
  CHECK(std::isnan(mx[1]));
  CHECK(std::isnan(mx[2]));
  CHECK(mn[0] == 1);
  CHECK(std::isnan(mn[2]));
  D c = values(clamp(a, std::optional<Scalar>(0), std::optional<Scalar>(2)));
  CHECK(c[0] == 1);
  CHECK(std::isnan(c[1]));
  CHECK(c[2] == 2);
  // min > max gives max everywhere.
  CHECK(values(clamp(tensor({-5, 0, 5}), std::optional<Scalar>(3), std::optional<Scalar>(1))) == D{1, 1, 1});
  CHECK(values(clamp_min(tensor({-5, 0, 5}), 1)) == D{1, 1, 5});
  CHECK(values(clamp_max(tensor({-5, 0, 5}), 1)) == D{-5, 0, 1});
  CHECK(clamp_min(tensor({-5, 0, 5}), 0.5).dtype() == DType::Float32);
  Tensor x = tensor({-3.0, 0.5, 9.0});
  x.clamp_(-1, 1);
  CHECK(values(x) == D{-1, 0.5, 1});
  // Tensor bounds broadcast; one may be absent.
  Tensor lo = tensor({0.0, 1.0, 2.0});
  CHECK(values(clamp(zeros({2, 3}), std::optional<Tensor>(lo), std::nullopt)) == D{0, 1, 2, 0, 1, 2});
  CHECK(values(tensor({5.0}).clamp(std::optional<Tensor>(), std::optional<Tensor>(lo))) == D{0, 1, 2});
  Tensor y = tensor({1.0});
  EXPECT_ERROR_UNCHANGED(y, ValueError, y.clamp_(std::nullopt, std::nullopt), "clamp", "min", "max");
  EXPECT_ERROR(ValueError, clamp(y, std::optional<Tensor>(), std::optional<Tensor>()), "clamp");
}

TEST_CASE("binary functions: comparisons compare in the promoted dtype") {
  Tensor i = tensor({2, 3});
  CHECK(values(i == 2.5) == D{0, 0});  // not 2 == 2
  CHECK(values(i < 2.5) == D{1, 0});
  CHECK((i < 2.5).dtype() == DType::Bool);
  CHECK(values(2 < i) == D{0, 1});
  CHECK(values(i != i) == D{0, 0});
  Tensor n = tensor({kNaN});
  CHECK(values(n == n) == D{0});
  CHECK(values(n != n) == D{1});
  // In place, the bool result is cast into self's dtype.
  Tensor f = tensor({1.0, 5.0});
  f.gt_(2);
  CHECK(f.dtype() == DType::Float32);
  CHECK(values(f) == D{0, 1});
  Tensor out = empty({2}, DType::Bool);
  ge_out(out, tensor({1, 2}), tensor({2, 2}));
  CHECK(values(out) == D{0, 1});
  Tensor fout = empty({2}, DType::Float32);  // bool casts into any dtype
  ge_out(fout, tensor({1.5, 2.5}), tensor({2, 2}));
  CHECK(values(fout) == D{0, 1});
}

TEST_CASE("binary functions: logical and bitwise ops and shifts") {
  Tensor a = tensor({0.0, 0.5, 2.0}), b = tensor({3, 0, 1});
  CHECK(values(logical_and(a, b)) == D{0, 0, 1});
  CHECK(values(logical_or(a, b)) == D{1, 1, 1});
  CHECK(values(logical_xor(a, b)) == D{1, 1, 0});
  CHECK(logical_xor(a, b).dtype() == DType::Bool);
  Tensor x = tensor({12, -1}), y = tensor({10, 6});
  CHECK(values(x & y) == D{8, 6});
  CHECK(values(x | y) == D{14, -1});
  CHECK(values(x ^ y) == D{6, -7});
  CHECK(values(tensor({true, false}) ^ true) == D{0, 1});
  CHECK((tensor({true, false}) | tensor({false, false})).dtype() == DType::Bool);
  // Shifts: out-of-range amounts give 0 (left) or the sign (right), never undefined behaviour.
  Tensor s = tensor({1, -16, 5}, DType::Int8);
  CHECK(values(s << 2) == D{4, -64, 20});
  CHECK(values(s << 8) == D{0, 0, 0});
  CHECK(values(s >> 2) == D{0, -4, 1});
  CHECK(values(s >> 100) == D{0, -1, 0});
  CHECK(values(s << tensor({-1, 1, 7}, DType::Int8)) == D{0, -32, -128});
  CHECK(values(1 << tensor({0, 3})) == D{1, 8});
  Tensor f = tensor({1.0, 2.0});
  EXPECT_ERROR_UNCHANGED(f, TypeError, f.bitwise_and_(1), "bitwise_and", "fp32");
  EXPECT_ERROR_UNCHANGED(x, TypeError, x | 1.5, "bitwise_or");
  Tensor bools = tensor({true});
  EXPECT_ERROR_UNCHANGED(bools, TypeError, bools << bools, "bitwise_left_shift", "bool");
  CHECK(values(bools << 1) == D{2});  // an int scalar lifts bool to int64, as in PyTorch
  CHECK((bools << 1).dtype() == DType::Int64);
}

TEST_CASE("binary functions: where, lerp and their Scalar forms") {
  Tensor c = tensor({true, false, true});
  Tensor a = tensor({1.0, 2.0, 3.0}), b = tensor({-1, -2, -3});
  CHECK(values(where(c, a, b)) == D{1, -2, 3});
  CHECK(where(c, a, b).dtype() == DType::Float32);
  CHECK(values(where(c, a, 0)) == D{1, 0, 3});
  CHECK(values(where(c, 7, b)) == D{7, -2, 7});
  CHECK(where(c, 7, b).dtype() == DType::Int64);
  CHECK(values(a.where(c, 9.5)) == D{1, 9.5, 3});
  // Three-way broadcasting.
  Tensor r = where(tensor({true, false}).view({2, 1}), ones({1, 3}), zeros({3}));
  CHECK(vec(r.sizes()) == V{2, 3});
  CHECK(values(r) == D{1, 1, 1, 0, 0, 0});
  Tensor out = empty({3}, DType::Float64);
  where_out(out, c, a, b);
  CHECK(values(out) == D{1, -2, 3});
  EXPECT_ERROR(TypeError, where(tensor({1, 0}), a.slice(0, 0, 2), a.slice(0, 0, 2)), "where", "bool");
  // lerp is exact at both ends.
  Tensor s = tensor({1.0, -3.0}), e = tensor({5.0, 7.0});
  CHECK(values(lerp(s, e, 0.0)) == values(s));
  CHECK(values(lerp(s, e, 1.0)) == values(e));
  CHECK(values(s.lerp(e, 0.25)) == D{2, -0.5});
  CHECK(values(lerp(s, e, tensor({0.5, 1.0}))) == D{3, 7});
  lerp_(s, e, 0.5);
  CHECK(values(s) == D{3, 2});
  EXPECT_ERROR(TypeError, lerp(tensor({1, 2}), tensor({3, 4}), 0.5), "lerp", "int64");
}

TEST_CASE("binary functions: Scalar overloads and operators") {
  Tensor a = tensor({1, 2, 3});
  CHECK(values(a.add(2)) == D{3, 4, 5});
  CHECK(values(a.add(2, 3)) == D{7, 8, 9});
  CHECK(values(a.sub(1)) == D{0, 1, 2});
  CHECK(values(a.mul(2.5)) == D{2.5, 5, 7.5});
  CHECK(values(a.div(2)) == D{0.5, 1, 1.5});
  CHECK(values(add(a, 1)) == D{2, 3, 4});
  CHECK(values(10 % a) == D{0, 0, 1});
  CHECK(values(a % 2) == D{1, 0, 1});
  CHECK(values(a == a) == D{1, 1, 1});
  CHECK(values(2 >= a) == D{1, 1, 0});
  CHECK(values(a > 1) == D{0, 1, 1});
  CHECK(values(a <= 2) == D{1, 1, 0});
  CHECK(values(a.maximum(2)) == D{2, 2, 3});
  CHECK(values(a.minimum(tensor({0, 5, 0}))) == D{0, 2, 0});
  Tensor m = a.clone();
  m.maximum_(2);  // no in-place schema: the out= form into self
  CHECK(values(m) == D{2, 2, 3});
  CHECK(values(atan2(tensor({1.0}), tensor({1.0}))) == D{std::atan2(1.0f, 1.0f)});
  CHECK(atan2(a, a).dtype() == DType::Float32);
  // Streaming a tensor still prints it (operator<< on Tensor and Scalar is the shift).
  std::ostringstream os;
  os << a;
  CHECK(os.str().find("tensor") != std::string::npos);
}

TEST_CASE("binary functions: meta tensors give shape and dtype only") {
  const TensorOptions meta = TensorOptions().device(Device("meta"));
  Tensor x = empty({4, 1, 3}, meta.dtype(DType::Int32)), y = empty({5, 1}, meta.dtype(DType::Int64));
  Tensor lt = x < y;
  CHECK(lt.is_meta());
  CHECK(vec(lt.sizes()) == V{4, 5, 3});
  CHECK(lt.dtype() == DType::Bool);
  CHECK(div(x, y, "floor").dtype() == DType::Int64);
  CHECK(atan2(x, y).dtype() == DType::Float32);
  Tensor w = where(empty({5, 1}, meta.dtype(DType::Bool)), x, 1.5);
  CHECK(vec(w.sizes()) == V{4, 5, 3});
  CHECK(w.dtype() == DType::Float32);
  CHECK(clamp(empty({2}, meta.dtype(DType::Float16)), std::optional<Scalar>(0), std::optional<Scalar>(1)).dtype() ==
        DType::Float16);
  EXPECT_ERROR(TypeError, x & empty({3}, meta.dtype(DType::Float32)), "bitwise_and");
}
