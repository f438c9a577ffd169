// The vectorized fp64 exp and log (backends/cpu/vec_math_f64.h, vec_loops.h): error in ulp
// against a long double reference on random sweeps of every binade (subnormal arguments and
// results included) and special values exactly as the C library gives them, for each copy of
// the loops the CPU has (baseline: the C library's; AVX2 + FMA; AVX-512), and the operators'
// fp64 exp and log, strided too, equal to the loop.
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "anatomy/backends/cpu/vec_loops.h"
#include "test_util.h"

using namespace anatomy;
using anatomy::cpu::VecFn64;
using anatomy::cpu::VecLoop64;
using anatomy_test::values;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMinNormal = std::numeric_limits<double>::min();
constexpr double kMinSubnormal = std::numeric_limits<double>::denorm_min();

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

long double reference(VecFn64 fn, double x) {
  return fn == VecFn64::Exp ? expl(static_cast<long double>(x)) : logl(static_cast<long double>(x));
}

// Arguments: exp over [-746, 710] and small magnitudes of every binade down to 2^-60; log over
// random bit patterns of every positive double (subnormals included) and values near 1.
std::vector<double> sweep(VecFn64 fn) {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> range(-746.0, 710.0), unit(-1.0, 1.0);
  std::vector<double> x;
  for (int i = 0; i < 400000; ++i) {
    if (fn == VecFn64::Exp) {
      x.push_back(range(gen));
      x.push_back(std::ldexp(unit(gen), -static_cast<int>(gen() % 60)));
    } else {
      const double any = std::bit_cast<double>(gen() & 0x7fefffffffffffffull);  // finite, >= 0
      x.push_back(any);
      x.push_back(1.0 + unit(gen) * 1e-3);
    }
  }
  return x;
}

// Special values: the loop's results must be the C library's exactly (NaN for NaN).
const std::vector<double> kSpecials = {0.0,           -0.0,
                                       kInf,          -kInf,
                                       kNaN,          1.0,
                                       -1.0,          709.78271289338397,
                                       709.79,        -745.13321910194111,
                                       -745.14,       -746.0,
                                       -800.0,        800.0,
                                       kMinSubnormal, kMinNormal,
                                       1e-310,        1e308};

void check_copy(VecLoop64 (*copy)(VecFn64), const char* name) {
  if (copy(VecFn64::Exp) == nullptr) {
    MESSAGE("no " << name << " on this CPU: its loops do not run here");
    return;
  }
  const std::string copy_name = name;
  for (VecFn64 fn : {VecFn64::Exp, VecFn64::Log}) {
    const std::string function = fn == VecFn64::Exp ? "exp" : "log";
    CAPTURE(copy_name);
    CAPTURE(function);
    const std::vector<double> x = sweep(fn);
    std::vector<double> y(x.size());
    copy(fn)(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0, worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const long double want = reference(fn, x[i]);
      if (std::isinf(static_cast<double>(want))) {
        CHECK(y[i] == static_cast<double>(want));
        continue;
      }
      const double e = ulp_error(y[i], want);
      if (e > worst) worst = e, worst_x = x[i];
    }
    CAPTURE(worst_x);
    CAPTURE(worst);
    // The baseline is the C library's; the vectorized copies are held to their measured bounds.
    CHECK(worst <= (fn == VecFn64::Exp ? 0.8 : 0.9));
    std::vector<double> s(kSpecials.size());
    copy(fn)(kSpecials.data(), s.data(), static_cast<int64_t>(s.size()));
    for (size_t i = 0; i < s.size(); ++i) {
      const double want = fn == VecFn64::Exp ? std::exp(kSpecials[i]) : std::log(kSpecials[i]);
      CAPTURE(kSpecials[i]);
      if (std::isnan(want)) {
        CHECK(std::isnan(s[i]));
      } else if (std::isinf(want) || want == 0.0) {
        CHECK(s[i] == want);
      } else {
        CHECK(ulp_error(s[i], reference(fn, kSpecials[i])) <= 0.9);
      }
    }
  }
}

}  // namespace

TEST_CASE("vec math fp64: the baseline (the C library) within the same bounds and special values") {
  check_copy(&cpu::vec_loop64_baseline, "the baseline");
}

TEST_CASE("vec math fp64: the AVX2 + FMA exp and log within 0.8 and 0.9 ulp and the C library's special values") {
  check_copy(&cpu::vec_loop64_avx2, "AVX2 + FMA");
}

TEST_CASE("vec math fp64: the AVX-512 exp and log within 0.8 and 0.9 ulp and the C library's special values") {
  check_copy(&cpu::vec_loop64_avx512, "AVX-512");
}

TEST_CASE("vec math fp64: the operators' exp and log, contiguous and strided, are the loop's values") {
  manual_seed(5);
  const Tensor x = randn({300, 7}, DType::Float64) * 20.0;
  const Tensor pos = rand({300, 7}, DType::Float64) * 1e3;
  for (VecFn64 fn : {VecFn64::Exp, VecFn64::Log}) {
    const Tensor in = fn == VecFn64::Exp ? x : pos;
    std::vector<double> want(static_cast<size_t>(in.numel()));
    const Tensor c = in.contiguous();
    cpu::vec_loop64(fn)(c.data_ptr<double>(), want.data(), c.numel());
    CHECK(values(fn == VecFn64::Exp ? exp(in) : log(in)) == want);
    // A transposed view runs the strided path through blocks: the same values, elementwise.
    const Tensor t = in.t();
    const Tensor got = (fn == VecFn64::Exp ? exp(t) : log(t)).t().contiguous();
    CHECK(values(got) == want);
  }
  // e^1 is e's nearest double, as the C library gives it.
  CHECK(exp(full({1}, 1.0, DType::Float64)).item<double>() == std::exp(1.0));
}
