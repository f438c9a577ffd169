// The vectorized fp64 functions (backends/cpu/vec_math_f64.h, vec_loops.h): error in ulp against
// a long double reference on random sweeps of every binade (subnormal arguments and results
// included, and arguments near multiples of pi/2 for sin, cos and tan) and special values as the
// C library gives them, for each copy of the loops the CPU has (baseline: the C library's; AVX2 +
// FMA; AVX-512), and the operators' fp64 functions, strided too, equal to the loop.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "anatomy/backends/cpu/vec_loops.h"
#include "test_util.h"

using namespace anatomy;
using anatomy::cpu::kAllVecFn;
using anatomy::cpu::VecFn;
using anatomy::cpu::VecLoop64;
using anatomy_test::values;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMinNormal = std::numeric_limits<double>::min();
constexpr double kMinSubnormal = std::numeric_limits<double>::denorm_min();
constexpr double kHalfPi = 1.5707963267948966;
constexpr double kTrigMax = 1048576.0;  // vec64::kTrigMax

// |got - want| in units of the last place of want (as a double; the subnormal spacing below
// the normal range).
double ulp_error(double got, long double want) {
  const long double a = fabsl(want);
  double ulp = kMinSubnormal;
  if (a >= kMinNormal) {
    int e = 0;
    frexpl(a, &e);
    ulp = std::ldexp(1.0, e - 53);
  }
  return static_cast<double>(fabsl(static_cast<long double>(got) - want) / ulp);
}

struct Function {
  VecFn fn;
  const char* name;
  long double (*reference)(long double);
  double lo, hi;  // the uniform sweep; [0, 0]: random bit patterns of positive doubles
  double bound;   // in ulp, for the vectorized copies
};

long double sigmoid_ref(long double x) { return 1.0L / (1.0L + expl(-x)); }
long double silu_ref(long double x) { return x / (1.0L + expl(-x)); }
long double gelu_ref(long double x) { return 0.5L * x * erfcl(-x * 0.707106781186547524400844362104849039L); }
// gelu's tanh form with the kernel's constants as doubles (their rounding is the definition, not
// an error): 0.5 x (1 + tanh(u)) = x / (1 + e^-2u).
// softplus with PyTorch's defaults (beta 1, threshold 20): x itself above 20.
long double softplus_ref(long double x) { return x > 20 ? x : log1pl(expl(x)); }
long double gelu_tanh_ref(long double x) {
  const long double beta = 0.79788456080286535588, kappa = 0.044715;
  return x / (1.0L + expl(-2.0L * beta * x * (1.0L + kappa * x * x)));
}

// The measured maxima (AVX-512 and AVX2 + FMA alike), rounded up: the test fails on a regression.
const Function kFunctions[] = {
    {VecFn::Exp, "exp", expl, -746, 710, 0.8},
    {VecFn::Log, "log", logl, 0, 0, 0.9},
    {VecFn::Exp2, "exp2", exp2l, -1076, 1025, 0.8},
    {VecFn::Log2, "log2", log2l, 0, 0, 0.6},
    {VecFn::Expm1, "expm1", expm1l, -50, 710, 1.1},
    {VecFn::Log1p, "log1p", log1pl, -1, 1e6, 1.5},
    {VecFn::Sigmoid, "sigmoid", sigmoid_ref, -750, 750, 2.4},
    {VecFn::Silu, "silu", silu_ref, -750, 750, 2.7},
    {VecFn::Tanh, "tanh", tanhl, -25, 25, 2.3},
    {VecFn::Erf, "erf", erfl, -7, 7, 1.0},
    {VecFn::Gelu, "gelu", gelu_ref, -40, 40, 4.7},
    {VecFn::GeluTanh, "gelu_tanh", gelu_tanh_ref, -40, 40, 3.1},
    {VecFn::Softplus, "softplus", softplus_ref, -750, 40, 1.5},
    {VecFn::Sin, "sin", sinl, -kTrigMax, kTrigMax, 0.8},
    {VecFn::Cos, "cos", cosl, -kTrigMax, kTrigMax, 0.8},
    {VecFn::Tan, "tan", tanl, -kTrigMax, kTrigMax, 2.1},
};

bool is_trig(VecFn fn) { return fn == VecFn::Sin || fn == VecFn::Cos || fn == VecFn::Tan; }

// The sweep's arguments: uniform over the function's range plus small magnitudes of every binade
// down to 2^-60 (or, for log and log2, random bit patterns of every positive double, subnormals
// included, and values near 1); for sin, cos and tan also multiples of pi/2 and their neighbours,
// where the reduction must not cancel.
std::vector<double> sweep(const Function& f) {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> range(f.lo, f.hi), unit(-1.0, 1.0);
  std::vector<double> x;
  for (int i = 0; i < 200000; ++i) {
    if (f.lo == 0 && f.hi == 0) {
      x.push_back(std::bit_cast<double>(gen() & 0x7fefffffffffffffull));  // finite, >= 0
      x.push_back(1.0 + unit(gen) * 1e-3);
    } else {
      x.push_back(range(gen));
      x.push_back(std::ldexp(unit(gen), -static_cast<int>(gen() % 60)));
    }
  }
  if (is_trig(f.fn)) {
    for (int k = 1; k < 600000; k += 37) {
      const double m = k * kHalfPi;
      x.insert(x.end(), {m, std::nextafter(m, 0.0), std::nextafter(m, kInf), -m});
    }
  }
  return x;
}

// Special values: NaN, an infinity or a zero (of the right sign) exactly where the exact value
// rounds to one, else within the bound.
const std::vector<double> kSpecials = {0.0,        -0.0,
                                       kInf,       -kInf,
                                       kNaN,       1.0,
                                       -1.0,       2.0,
                                       0.5,        709.78271289338397,
                                       709.79,     -745.13321910194111,
                                       -745.14,    -746.0,
                                       -800.0,     800.0,
                                       1024.0,     -1074.0,
                                       -1075.5,    -40.0,
                                       -45.0,      22.0,
                                       -22.5,      kMinSubnormal,
                                       kMinNormal, 1e-310,
                                       1e308,      kHalfPi,
                                       kTrigMax,   2e6,
                                       1e22,       -3e300};

void check_copy(VecLoop64 (*copy)(VecFn), const char* name) {
  if (copy(VecFn::Exp) == nullptr) {
    MESSAGE("no " << name << " on this CPU: its loops do not run here");
    return;
  }
  const std::string copy_name = name;
  const bool is_baseline = copy_name == "the baseline";
  for (const Function& f : kFunctions) {
    const std::string function = f.name;
    CAPTURE(copy_name);
    CAPTURE(function);
    const std::vector<double> x = sweep(f);
    std::vector<double> y(x.size());
    copy(f.fn)(x.data(), y.data(), static_cast<int64_t>(x.size()), {});
    double worst = 0, worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const long double want = f.reference(static_cast<long double>(x[i]));
      if (std::isinf(static_cast<double>(want))) {
        CHECK(y[i] == static_cast<double>(want));
        continue;
      }
      const double e = ulp_error(y[i], want);
      if (!(e <= worst)) worst = e, worst_x = x[i];
    }
    CAPTURE(worst_x);
    CAPTURE(worst);
    // The baseline is the C library's (sigmoid, silu and gelu, which it lacks, vec_math_f64.h's);
    // the vectorized copies are held to their measured bounds.
    CHECK(worst <= (is_baseline ? std::max(4.0, f.bound) : f.bound));
    std::vector<double> s(kSpecials.size());
    copy(f.fn)(kSpecials.data(), s.data(), static_cast<int64_t>(s.size()), {});
    for (size_t i = 0; i < s.size(); ++i) {
      const long double want = f.reference(kSpecials[i]);
      const double rounded = static_cast<double>(want);
      CAPTURE(kSpecials[i]);
      if (std::isnan(rounded)) {
        CHECK(std::isnan(s[i]));
      } else if (std::isinf(rounded) || rounded == 0.0) {
        CHECK(std::bit_cast<uint64_t>(s[i]) == std::bit_cast<uint64_t>(rounded));  // the zero's sign too
      } else {
        CHECK(ulp_error(s[i], want) <= (is_baseline ? std::max(4.0, f.bound) : f.bound));
      }
    }
  }
}

}  // namespace

TEST_CASE("vec math fp64: the baseline (the C library) within the bounds and special values") {
  check_copy(&cpu::vec_loop64_baseline, "the baseline");
}

TEST_CASE("vec math fp64: the AVX2 + FMA functions within their ulp bounds and the C library's special values") {
  check_copy(&cpu::vec_loop64_avx2, "AVX2 + FMA");
}

TEST_CASE("vec math fp64: the AVX-512 functions within their ulp bounds and the C library's special values") {
  check_copy(&cpu::vec_loop64_avx512, "AVX-512");
}

TEST_CASE("vec math fp64: exp2 of an integer and log2 of a power of two are exact") {
  std::vector<double> ints, powers;
  for (int k = -1074; k <= 1023; ++k) ints.push_back(k), powers.push_back(std::ldexp(1.0, k));
  std::vector<double> e(ints.size()), l(powers.size());
  cpu::vec_loop64(VecFn::Exp2)(ints.data(), e.data(), static_cast<int64_t>(ints.size()), {});
  cpu::vec_loop64(VecFn::Log2)(powers.data(), l.data(), static_cast<int64_t>(powers.size()), {});
  for (size_t i = 0; i < ints.size(); ++i) {
    CAPTURE(ints[i]);
    CHECK(e[i] == powers[i]);
    CHECK(l[i] == ints[i]);
  }
}

TEST_CASE("vec math fp64: sin, cos and tan beyond the reduced range take the C library's value, in place too") {
  std::vector<double> x = {0.5, 2e6, -3.5e7, 1e300, kInf, -kInf, kNaN, kTrigMax, -7.25};
  for (VecFn fn : {VecFn::Sin, VecFn::Cos, VecFn::Tan}) {
    const auto libm = [fn](double v) {
      return fn == VecFn::Sin ? std::sin(v) : fn == VecFn::Cos ? std::cos(v) : std::tan(v);
    };
    CAPTURE(static_cast<int>(fn));
    std::vector<double> y = x;
    cpu::vec_loop64(fn)(y.data(), y.data(), static_cast<int64_t>(y.size()), {});  // in place
    for (size_t i = 0; i < x.size(); ++i) {
      CAPTURE(x[i]);
      if (std::isnan(libm(x[i]))) {
        CHECK(std::isnan(y[i]));
      } else if (std::fabs(x[i]) > kTrigMax) {
        CHECK(y[i] == libm(x[i]));
      } else {
        CHECK(std::fabs(y[i] - libm(x[i])) <= 4e-16 * std::fabs(libm(x[i])) + 1e-300);
      }
    }
  }
}

TEST_CASE("vec math fp64: the operators' functions, contiguous and strided, are the loop's values") {
  manual_seed(5);
  const Tensor x = randn({300, 7}, DType::Float64) * 20.0;
  const Tensor pos = rand({300, 7}, DType::Float64) * 1e3;
  const std::vector<std::pair<VecFn, Tensor (*)(const Tensor&)>> ops = {
      {VecFn::Exp, [](const Tensor& t) { return exp(t); }},
      {VecFn::Log, [](const Tensor& t) { return log(t); }},
      {VecFn::Exp2, [](const Tensor& t) { return exp2(t); }},
      {VecFn::Log2, [](const Tensor& t) { return log2(t); }},
      {VecFn::Expm1, [](const Tensor& t) { return expm1(t); }},
      {VecFn::Log1p, [](const Tensor& t) { return log1p(t); }},
      {VecFn::Sigmoid, [](const Tensor& t) { return sigmoid(t); }},
      {VecFn::Silu, [](const Tensor& t) { return silu(t); }},
      {VecFn::Tanh, [](const Tensor& t) { return tanh(t); }},
      {VecFn::Erf, [](const Tensor& t) { return erf(t); }},
      {VecFn::Gelu, [](const Tensor& t) { return gelu(t); }},
      {VecFn::GeluTanh, [](const Tensor& t) { return gelu(t, "tanh"); }},
      {VecFn::Softplus, [](const Tensor& t) { return softplus(t); }},
      {VecFn::Sin, [](const Tensor& t) { return sin(t); }},
      {VecFn::Cos, [](const Tensor& t) { return cos(t); }},
      {VecFn::Tan, [](const Tensor& t) { return tan(t); }},
  };
  CHECK(ops.size() == std::size(kAllVecFn));
  for (const auto& [fn, op] : ops) {
    CAPTURE(static_cast<int>(fn));
    const bool positive = fn == VecFn::Log || fn == VecFn::Log2 || fn == VecFn::Log1p;
    const Tensor in = positive ? pos : x;
    std::vector<double> want(static_cast<size_t>(in.numel()));
    const Tensor c = in.contiguous();
    cpu::vec_loop64(fn)(c.data_ptr<double>(), want.data(), c.numel(), {});
    CHECK(values(op(in)) == want);
    // A transposed view runs the strided path through blocks: the same values, elementwise.
    CHECK(values(op(in.t()).t().contiguous()) == want);
  }
  // e^1 is e's nearest double, as the C library gives it.
  CHECK(exp(full({1}, 1.0, DType::Float64)).item<double>() == std::exp(1.0));
}
