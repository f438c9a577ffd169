// The vectorized fp32 functions (backends/cpu/vec_math.h, vec_loops.h): error in ulp against an
// fp64 reference over a dense sweep of every fp32 binade, special values (infinities, NaN,
// signed zeros, overflow and underflow edges, subnormal inputs) exactly as the fp64 functions
// give them, for each copy of the loops (baseline, AVX2 + FMA, AVX-512), and the operators' strided and fp16/bf16
// paths equal to the contiguous fp32 loop.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "anatomy/backends/cpu/gelu_pieces.h"
#include "anatomy/backends/cpu/tanh_pieces.h"
#include "anatomy/backends/cpu/vec_loops.h"
#include "test_util.h"

using namespace anatomy;
using anatomy::cpu::VecFn;
using anatomy::cpu::VecLoop;
using anatomy_test::values;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The exact value each function approximates, in fp64 (forms that do not cancel: gelu through
// erfc, gelu's tanh form and sigmoid as quotients, softplus with its threshold of 20).
double reference(VecFn fn, double x) {
  switch (fn) {
    case VecFn::Exp:
      return std::exp(x);
    case VecFn::Expm1:
      return std::expm1(x);
    case VecFn::Log:
      return std::log(x);
    case VecFn::Log1p:
      return std::log1p(x);
    case VecFn::Sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case VecFn::Silu:
      return x / (1.0 + std::exp(-x));
    case VecFn::Tanh:
      return std::tanh(x);
    case VecFn::Erf:
      return std::erf(x);
    case VecFn::Gelu:
      return 0.5 * x * std::erfc(-x * 0.70710678118654752440);
    case VecFn::GeluTanh: {
      const double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
      return x / (1.0 + std::exp(-2 * u));
    }
    case VecFn::Softplus:
      return x > 20 ? x : std::log1p(std::exp(x));
    case VecFn::Sin:
      return std::sin(x);
    case VecFn::Cos:
      return std::cos(x);
    case VecFn::Tan:
      return std::tan(x);
    case VecFn::Exp2:
      return std::exp2(x);
    case VecFn::Log2:
      return std::log2(x);
  }
  return 0;
}

struct Case {
  const char* name;
  VecFn fn;
  double max_ulp;  // the bound docs/perf.md states
};

// The measured maximum over this file's sweep (docs/perf.md), rounded up to the next half ulp.
const Case kCases[] = {
    {"exp", VecFn::Exp, 1.0},           {"expm1", VecFn::Expm1, 2.0},
    {"log", VecFn::Log, 1.0},           {"log1p", VecFn::Log1p, 1.5},
    {"sigmoid", VecFn::Sigmoid, 3.0},   {"silu", VecFn::Silu, 3.0},
    {"tanh", VecFn::Tanh, 1.5},         {"erf", VecFn::Erf, 2.5},
    {"gelu", VecFn::Gelu, 6.0},         {"gelu_tanh", VecFn::GeluTanh, 3.0},
    {"softplus", VecFn::Softplus, 2.0}, {"sin", VecFn::Sin, 2.0},
    {"cos", VecFn::Cos, 2.0},           {"tan", VecFn::Tan, 3.5},
    {"exp2", VecFn::Exp2, 1.5},         {"log2", VecFn::Log2, 2.0},
};

// The size of one fp32 ulp at |y| (subnormal spacing below 2^-126).
double ulp_at(double y) {
  int e = 0;
  std::frexp(y, &e);  // |y| in [2^(e-1), 2^e)
  return std::ldexp(1.0, std::max(e - 1, -126) - 23);
}

// Every 509th bit pattern of each sign: about 16,500 points per binade, NaN patterns included.
// Under a sanitizer every 4,093rd (about 2,000 per binade): that build looks for memory errors
// and undefined behaviour, which the chunks and tails find as well with fewer values, and the
// accuracy is held by the optimized build's full sweep.
std::vector<float> sweep() {
  const uint64_t step = anatomy_test::under_sanitizer() ? 4093 : 509;
  std::vector<float> x;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += step) x.push_back(std::bit_cast<float>(static_cast<uint32_t>(u)));
  for (float v : {0.0f, -0.0f, kInf, -kInf, kNaN, std::numeric_limits<float>::denorm_min(),
                  -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest()}) {
    x.push_back(v);
  }
  return x;
}

// In chunks of 256, as the operators' blocks call the loops: the sweep runs in order of the bit
// patterns, so most chunks of sin, cos and tan hold no argument beyond their reduced range and
// take the vector loop (a chunk that holds one takes the scalar one with the C library).
std::vector<float> run(VecLoop loop, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t begin = 0; begin < x.size(); begin += 256) {
    const size_t n = std::min<size_t>(256, x.size() - begin);
    loop(x.data() + begin, y.data() + begin, static_cast<int64_t>(n), {});
  }
  return y;
}

struct UlpError {
  double max_ulp = 0;
  float worst_x = 0;
  int64_t wrong_specials = 0;  // NaN, inf or a finite value where the reference has another kind
  float first_wrong = 0;
};

UlpError measure(VecFn fn, const std::vector<float>& x, const std::vector<float>& y) {
  UlpError err;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = reference(fn, static_cast<double>(x[i]));
    const float want_f = static_cast<float>(want);
    const bool special = std::isnan(want) || std::isinf(want_f);
    if (special || std::isnan(y[i]) || std::isinf(y[i])) {
      const bool same = std::isnan(want) ? std::isnan(y[i]) : y[i] == want_f;
      if (!same && err.wrong_specials++ == 0) err.first_wrong = x[i];
      continue;
    }
    const double e = std::fabs(static_cast<double>(y[i]) - want) / ulp_at(want);
    if (e > err.max_ulp) err.max_ulp = e, err.worst_x = x[i];
  }
  return err;
}

}  // namespace

namespace {

// One copy of the loops over the sweep: every function within its bound, every special value
// the fp64 function's. A copy the CPU lacks is reported, not run.
void check_copy(cpu::VecLoop (*copy)(VecFn), const char* name) {
  if (copy(VecFn::Exp) == nullptr) {
    MESSAGE("no " << name << " on this CPU: its loops do not run here");
    return;
  }
  const std::vector<float> x = sweep();
  const std::string copy_name = name;  // a std::string: CAPTURE prints a char pointer's address
  for (const Case& c : kCases) {
    const std::string function = c.name;
    CAPTURE(copy_name);
    CAPTURE(function);
    const UlpError err = measure(c.fn, x, run(copy(c.fn), x));
    CAPTURE(err.worst_x);
    CHECK(err.max_ulp <= c.max_ulp);
    CAPTURE(err.first_wrong);
    CHECK(err.wrong_specials == 0);
  }
}

}  // namespace

TEST_CASE("vec math: every function within its ulp bound of fp64 over a sweep of all binades") {
  check_copy(&cpu::vec_loop_baseline, "the baseline (SSE2)");
}

// The wide copies contract a * b + c into FMAs (one rounding where the baseline has two), so
// their last bits may differ from the baseline's; they are held to the same bounds.
TEST_CASE("vec math: the AVX2 + FMA loops within the same bounds and special values") {
  check_copy(&cpu::vec_loop_avx2, "AVX2 + FMA");
}

TEST_CASE("vec math: the AVX-512 loops within the same bounds and special values") {
  check_copy(&cpu::vec_loop_avx512, "AVX-512");
}

TEST_CASE("vec math: sin, cos and tan beyond the reduced range take the C library's value, in place too") {
  // Tan's relative error near its pole is the reduced argument's: the bound here is 4 ulp.
  // 1.5707963 is in range, next to pi/2: its tangent (-2.3e7) is beyond the range itself.
  const std::vector<float> x = {8191.9f, 8192.0f, 8192.5f, -1e5f, 3e30f,      -3e38f,
                                1e-30f,  kInf,    -kInf,   kNaN,  1.5707963f, 0.5f};
  for (VecFn fn : {VecFn::Sin, VecFn::Cos, VecFn::Tan}) {
    const int which = static_cast<int>(fn);
    CAPTURE(which);
    std::vector<float> out(x.size()), inplace = x;
    cpu::vec_loop(fn)(x.data(), out.data(), static_cast<int64_t>(x.size()), {});
    cpu::vec_loop(fn)(inplace.data(), inplace.data(), static_cast<int64_t>(x.size()), {});
    for (size_t i = 0; i < x.size(); ++i) {
      CAPTURE(x[i]);
      const double want = reference(fn, static_cast<double>(x[i]));
      for (float got : {out[i], inplace[i]}) {
        if (std::isnan(want)) CHECK(std::isnan(got));
        else CHECK(std::fabs(got - want) <= 4 * ulp_at(want));
      }
    }
  }
}

// Note [gelu by polynomial pieces] (gelu_pieces.h): the AVX-512 gelu takes Phi from 32 fitted
// polynomials over [-5.5, 5.5], 3.05 ulp at most over every float there (measured once,
// exhaustively); here every 97th bit pattern of the range, each piece's ends and the values around
// them, signed zeros, and past 5.5, where x Phi(x) rounds to x.
#if defined(__x86_64__)
TEST_CASE("vec math: the AVX-512 gelu's polynomial pieces within 3.1 ulp over [-5.5, 5.5]") {
  const cpu::VecLoop loop = cpu::vec_loop_avx512(VecFn::Gelu);
  if (loop == nullptr) {
    MESSAGE("no AVX-512 on this CPU: its loops do not run here");
    return;
  }
  std::vector<float> x;
  const uint32_t end = std::bit_cast<uint32_t>(cpu::vec::kGeluPiecesEnd);
  for (uint32_t u = 0; u <= end; u += 97) x.insert(x.end(), {std::bit_cast<float>(u), -std::bit_cast<float>(u)});
  for (int piece = 0; piece <= cpu::vec::kGeluPieces; ++piece) {
    const float edge = static_cast<float>(piece) * cpu::vec::kGeluPieceWidth;
    for (float v : {std::nextafter(edge, 0.0f), edge, std::nextafter(edge, kInf)}) x.insert(x.end(), {v, -v});
  }
  const std::vector<float> y = run(loop, x);
  const UlpError err = measure(VecFn::Gelu, x, y);
  CAPTURE(err.worst_x);
  CHECK(err.max_ulp <= 3.1);
  CHECK(err.wrong_specials == 0);
  const std::vector<float> zeros = run(loop, {0.0f, -0.0f});
  CHECK(std::bit_cast<uint32_t>(zeros[0]) == 0u);
  CHECK(std::bit_cast<uint32_t>(zeros[1]) == 0x80000000u);
  const std::vector<float> past = {std::nextafter(5.5f, kInf), 6.0f, 13.0f, 1e30f, std::numeric_limits<float>::max()};
  const std::vector<float> same = run(loop, past);
  for (size_t i = 0; i < past.size(); ++i) CHECK(same[i] == past[i]);
}
#endif

// Note [tanh by polynomial pieces] (tanh_pieces.h): the AVX-512 tanh takes [0.625, 9.625) from 32
// fitted polynomials, 1.00 ulp at most over every float there (scripts/fit-tanh-pieces.py); here
// every 97th bit pattern of the range and each piece's ends, both signs, the odd polynomial's
// side of 0.625, 1 from 9.625 on, signed zeros, infinities and NaN; and each value the same with a
// NaN beside it in its block.
#if defined(__x86_64__)
TEST_CASE("vec math: the AVX-512 tanh's polynomial pieces within 1.0 ulp from 0.625 up to 9.625") {
  const cpu::VecLoop loop = cpu::vec_loop_avx512(VecFn::Tanh);
  if (loop == nullptr) {
    MESSAGE("no AVX-512 on this CPU: its loops do not run here");
    return;
  }
  std::vector<float> x;
  const uint32_t begin = std::bit_cast<uint32_t>(cpu::vec::kTanhPiecesStart);
  const uint32_t end = std::bit_cast<uint32_t>(cpu::vec::kTanhPiecesEnd);
  for (uint32_t u = begin; u < end; u += 97) x.insert(x.end(), {std::bit_cast<float>(u), -std::bit_cast<float>(u)});
  for (int piece = 0; piece < cpu::vec::kTanhPieces; ++piece) {
    const float edge = cpu::vec::kTanhPiecesStart + static_cast<float>(piece) * cpu::vec::kTanhPieceWidth;
    for (float v : {edge, std::nextafter(edge, kInf)}) x.insert(x.end(), {v, -v});
  }
  std::vector<float> y = run(loop, x);
  UlpError err = measure(VecFn::Tanh, x, y);
  CAPTURE(err.worst_x);
  CHECK(err.max_ulp <= 1.0);
  CHECK(err.wrong_specials == 0);
  // Below 0.625 the odd polynomial, as vec::tanh; past the pieces 1; the special values.
  const float below = std::nextafter(cpu::vec::kTanhPiecesStart, 0.0f);
  const std::vector<float> edges = {below, -below, 1e-3f, -1e-30f, std::numeric_limits<float>::denorm_min()};
  y = run(loop, edges);
  for (size_t i = 0; i < edges.size(); ++i) CHECK(y[i] == cpu::vec::tanh(edges[i]));
  const std::vector<float> ones = {cpu::vec::kTanhPiecesEnd, 10.0f, 1e30f, kInf};
  y = run(loop, ones);
  for (float v : y) CHECK(v == 1.0f);
  y = run(loop, {-cpu::vec::kTanhPiecesEnd, -kInf, 0.0f, -0.0f, kNaN});
  CHECK(y[0] == -1.0f);
  CHECK(y[1] == -1.0f);
  CHECK(std::bit_cast<uint32_t>(y[2]) == 0u);
  CHECK(std::bit_cast<uint32_t>(y[3]) == 0x80000000u);
  CHECK(std::isnan(y[4]));
  // The same values with a NaN in every block of 64.
  std::vector<float> with_nan(x.begin(), x.begin() + 64 * 100);
  const std::vector<float> plain = run(loop, with_nan);
  for (size_t k = 63; k < with_nan.size(); k += 64) with_nan[k] = kNaN;
  const std::vector<float> beside = run(loop, with_nan);
  for (size_t i = 0; i < plain.size(); ++i) {
    if (i % 64 != 63) CHECK(std::bit_cast<uint32_t>(plain[i]) == std::bit_cast<uint32_t>(beside[i]));
  }
}
#endif

TEST_CASE("vec math: ANATOMY_CPU_CAPABILITY caps the copies the loops take") {
  // CTest runs this case and the operators' again under avx2 and default (tests/CMakeLists.txt).
  const char* env = std::getenv("ANATOMY_CPU_CAPABILITY");
  const std::string cap = env != nullptr ? env : "";
  CAPTURE(cap);
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  const bool avx512 = false, avx2 = false;
#endif
  CHECK(cpu::cpu_has_avx512f() == (avx512 && cap != "avx2" && cap != "default"));
  CHECK(cpu::cpu_has_avx2_fma() == (avx2 && cap != "default"));
  // The loop the operators take is the widest allowed (function pointers compared as bools:
  // doctest cannot print them).
  const cpu::VecLoop taken = cpu::vec_loop(VecFn::Exp);
  if (cpu::cpu_has_avx512f()) {
    CHECK(static_cast<bool>(taken == cpu::vec_loop_avx512(VecFn::Exp)));
  } else if (cpu::cpu_has_avx2_fma()) {
    CHECK(static_cast<bool>(cpu::vec_loop_avx512(VecFn::Exp) == nullptr));
    CHECK(static_cast<bool>(taken == cpu::vec_loop_avx2(VecFn::Exp)));
  } else {
    CHECK(static_cast<bool>(cpu::vec_loop_avx2(VecFn::Exp) == nullptr));
    CHECK(static_cast<bool>(taken == cpu::vec_loop_baseline(VecFn::Exp)));
  }
}

TEST_CASE("vec math: tanh keeps the sign of zero in every copy") {
  for (cpu::VecLoop (*copy)(VecFn) : {&cpu::vec_loop_baseline, &cpu::vec_loop_avx2, &cpu::vec_loop_avx512}) {
    const cpu::VecLoop loop = copy(VecFn::Tanh);
    if (loop == nullptr) continue;
    const std::vector<float> y = run(loop, {0.0f, -0.0f});
    CHECK(std::bit_cast<uint32_t>(y[0]) == 0u);
    CHECK(std::bit_cast<uint32_t>(y[1]) == 0x80000000u);
  }
}

TEST_CASE("vec math: the fast forms (blocks of arguments in range) give the full forms' values") {
  // prefetching_loop runs a block of 64 arguments all within a function's fast range through its
  // fast form; a NaN in every block sends each through the full form instead: the values must
  // agree bit for bit, in every copy the CPU has.
  struct Range {
    VecFn fn;
    float lo, hi;
  };
  const Range ranges[] = {{VecFn::Exp, -87.0f, 88.0f},
                          {VecFn::Sigmoid, -87.0f, 87.0f},
                          {VecFn::Silu, -87.0f, 87.0f},
                          {VecFn::Gelu, -13.0f, 13.0f},
                          {VecFn::GeluTanh, -9.0f, 9.0f}};
  std::mt19937 gen(7);
  for (const Range& r : ranges) {
    std::uniform_real_distribution<float> inside(r.lo, r.hi);
    std::vector<float> x(64 * 200);
    for (float& v : x) v = inside(gen);
    x[0] = r.lo, x[1] = r.hi, x[2] = 0.0f, x[3] = -0.0f;
    std::vector<float> with_nan = x;
    for (size_t k = 63; k < with_nan.size(); k += 64) with_nan[k] = kNaN;
    for (cpu::VecLoop (*copy)(VecFn) : {&cpu::vec_loop_baseline, &cpu::vec_loop_avx2, &cpu::vec_loop_avx512}) {
      const cpu::VecLoop loop = copy(r.fn);
      if (loop == nullptr) continue;
      CAPTURE(static_cast<int>(r.fn));
      std::vector<float> fast(x.size()), full(x.size());
      loop(x.data(), fast.data(), static_cast<int64_t>(x.size()), {});
      loop(with_nan.data(), full.data(), static_cast<int64_t>(x.size()), {});
      for (size_t i = 0; i < x.size(); ++i) {
        if (i % 64 == 63) continue;
        CAPTURE(x[i]);
        CHECK(std::bit_cast<uint32_t>(fast[i]) == std::bit_cast<uint32_t>(full[i]));
      }
    }
  }
}

TEST_CASE("vec math: exp2 of an integer and log2 of a power of two are exact") {
  std::vector<float> x;
  for (int k = -149; k <= 127; ++k) x.push_back(static_cast<float>(k));
  for (int k = -149; k <= 127; ++k) x.push_back(std::ldexp(1.0f, k));
  std::vector<float> e(x.size()), l(x.size());
  cpu::vec_loop(VecFn::Exp2)(x.data(), e.data(), 277, {});
  cpu::vec_loop(VecFn::Log2)(x.data() + 277, l.data(), 277, {});
  for (int k = -149; k <= 127; ++k) {
    CAPTURE(k);
    CHECK(e[static_cast<size_t>(k + 149)] == std::ldexp(1.0f, k));
    CHECK(l[static_cast<size_t>(k + 149)] == static_cast<float>(k));
  }
}

TEST_CASE("vec math: softplus keeps x above the threshold and scales by beta below it") {
  const std::vector<float> x = {-30.0f, -1.0f, 0.5f, 1.4f, 1.6f, 40.0f, kInf, -kInf};
  std::vector<float> y(x.size());
  cpu::vec_loop(VecFn::Softplus)(x.data(), y.data(), static_cast<int64_t>(x.size()), {2.0f, 3.0f});
  for (size_t i = 0; i < x.size(); ++i) {
    CAPTURE(x[i]);
    const double bx = 2.0 * x[i];
    const double want = bx > 3.0 ? x[i] : std::log1p(std::exp(bx)) / 2.0;
    if (std::isinf(want)) CHECK(y[i] == static_cast<float>(want));
    else CHECK(std::fabs(y[i] - want) <= 2 * ulp_at(want));
  }
}

TEST_CASE("vec math: strided, fp16 and bf16 operands give the contiguous fp32 loop's values") {
  manual_seed(3);
  const Tensor x = randn({64, 33}, DType::Float32) * 4;
  const Tensor xt = x.t();  // strided: goes through the block buffers
  for (const auto& [name, op] : std::vector<std::pair<std::string, Tensor (*)(const Tensor&)>>{
           {"exp", [](const Tensor& t) { return anatomy::exp(t); }},
           {"tanh", [](const Tensor& t) { return anatomy::tanh(t); }},
           {"sigmoid", [](const Tensor& t) { return anatomy::sigmoid(t); }},
           {"gelu", [](const Tensor& t) { return anatomy::gelu(t); }}}) {
    CAPTURE(name);
    const Tensor contiguous = op(xt.contiguous());
    CHECK(values(op(xt)) == values(contiguous));
    for (DType t : {DType::Float16, DType::BFloat16}) {
      CAPTURE(anatomy::name(t));
      const Tensor low = xt.to(t);
      // fp32 of the rounded input, computed by the fp32 loop and rounded once.
      CHECK(values(op(low)) == values(op(low.to(DType::Float32)).to(t)));
    }
  }
}
