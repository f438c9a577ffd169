// Op-table entries: element-wise unary operators, and the casts between every pair of dtypes.
#include <algorithm>
#include <cmath>
#include <limits>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kAll = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                                 DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kNumeric = {DType::UInt8,   DType::Int8,     DType::Int32,   DType::Int64,
                                     DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kIntegral = {DType::Bool, DType::UInt8, DType::Int8, DType::Int32, DType::Int64};
const std::vector<DType> kFloating = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// How the result dtype follows from the input's (the kind column of the unary rows,
// dispatch/ops/unary_rows.h).
enum class Result { Same, Float, Bool };

// An integer result wrapped into its dtype's range, as the kernel's integer arithmetic does
// (negating a uint8 wraps); done here so the reference never converts an out-of-range double.
double wrap_integer(double v, DType t) {
  auto wrap = [v](double lo, double span) { return lo + std::fmod(std::fmod(v - lo, span) + span, span); };
  switch (t) {
    case DType::UInt8:
      return wrap(0, 256);
    case DType::Int8:
      return wrap(-128, 256);
    default:
      return v;
  }
}

using Fn = std::function<Tensor(const Tensor&)>;
using InplaceFn = std::function<void(const Tensor&)>;
using OutFn = std::function<void(const Tensor&, const Tensor&)>;

// One element-wise unary entry: the standard samples from `domain`, and a reference applying f
// to each value (first rounded to the result dtype, as the kernel computes in it).
OpInfo unary(std::string name, std::vector<DType> dtypes, Result result, std::function<double(double)> f, Fn fn,
             InplaceFn inplace, OutFn out, Domain domain = {}) {
  OpInfo info;
  info.name = name;
  info.family = OpFamily::Unary;
  info.schemas = {name};
  if (inplace) info.schemas.push_back(name + "_");
  if (out) info.schemas.push_back(name + ".out");
  info.dtypes = std::move(dtypes);
  info.differentiable = result != Result::Bool;
  info.samples = [domain](DType t) { return elementwise_samples(1, t, {domain}); };
  info.op = [fn](const SampleInput& s) { return std::vector<Tensor>{fn(s.tensors[0])}; };
  info.reference = [f, result](const std::vector<RefTensor>& in, const SampleInput&) {
    const DType t = in[0].dtype;
    DType r = t;
    if (result == Result::Bool) r = DType::Bool;
    if (result == Result::Float && !is_floating(t)) r = kDefaultFloat;
    const DType compute = result == Result::Bool ? t : r;
    return std::vector<RefTensor>{map_unary(in[0], r, [&](double x) {
      const double y = f(round_to(x, compute));
      return is_floating(r) ? y : wrap_integer(y, r);
    })};
  };
  if (inplace) info.inplace = [inplace](const SampleInput& s) { inplace(s.tensors[0]); };
  if (out) info.out = [out](const Tensor& o, const SampleInput& s) { out(o, s.tensors[0]); };
  return info;
}

// A bad input: the op called on a tensor of `dtype` raises TypeError naming the op.
ErrorInput wrong_dtype(const std::string& op, DType dtype) {
  SampleInput s;
  s.label = fmt::format("{} input", name(dtype));
  s.tensors = {random_tensor({2, 3}, dtype)};
  return {s, &typeid(TypeError), {op, std::string(name(dtype))}};
}

SampleInput bench_one(int64_t n) {
  SampleInput s;
  s.tensors = {randn({n})};
  return s;
}

// Round half to even, written out (not std::nearbyint, which the kernel uses).
double round_half_even(double x) {
  double r = std::floor(x);
  const double d = x - r;
  if (d > 0.5 || (d == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1;
  return r;
}

double sign_of(double x) { return std::isnan(x) ? x : static_cast<double>((x > 0) - (x < 0)); }

// The largest finite value of a floating dtype (nan_to_num's default for +inf).
double largest(DType t) {
  switch (t) {
    case DType::Float16:
      return 65504.0;
    case DType::BFloat16:
      return 3.3895313892515355e38;
    case DType::Float32:
      return 3.4028234663852886e38;
    default:
      return std::numeric_limits<double>::max();
  }
}

// digamma by its reflection, recurrence and asymptotic series, written independently of the
// kernel's (which stops the recurrence at 10 and evaluates the series by Horner's rule).
double digamma_ref(double x) {
  if (std::isnan(x) || x == -std::numeric_limits<double>::infinity()) return std::nan("");
  if (x == 0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (x < 0) {
    if (x == std::floor(x)) return std::nan("");
    const double pi = 3.14159265358979323846;
    return digamma_ref(1 - x) - pi / std::tan(pi * (x - std::trunc(x)));
  }
  double acc = 0;
  for (; x < 20; x += 1) acc -= 1 / x;
  const double z = 1 / (x * x);
  return acc + std::log(x) - 0.5 / x -
         z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132)))));
}

// polygamma(n, x) for n >= 1: (-1)^(n+1) n! sum over k of (x + k)^-(n+1), summed to k = 63 and
// the rest by Euler-Maclaurin; digamma for n = 0. At the poles (x a non-positive integer) the
// sum is inf, so the result is +-inf; at +inf it is 0.
double polygamma_ref(int n, double x) {
  if (n == 0) return digamma_ref(x);
  if (std::isnan(x)) return x;
  const double inf = std::numeric_limits<double>::infinity();
  if (x <= 0 && x == std::floor(x)) return n % 2 == 1 ? inf : -inf;
  if (x == inf) return 0;
  // (x + k)^-(n+1) by n + 1 products, not pow: a few ulps in fp64, and pow on every term was
  // most of the op table's unary time.
  auto inverse_power = [n](double base) {
    const double inverse = 1 / base;
    double p = inverse;
    for (int i = 0; i < n; ++i) p *= inverse;
    return p;
  };
  double sum = 0;
  for (int k = 0; k < 64; ++k) sum += inverse_power(x + k);
  const double y = x + 64;
  sum += 1 / (n * std::pow(y, n)) + 1 / (2 * std::pow(y, n + 1)) + (n + 1) / (12 * std::pow(y, n + 2)) -
         (n + 1) * (n + 2) * (n + 3) / (720 * std::pow(y, n + 4));
  double factorial = 1;
  for (int k = 2; k <= n; ++k) factorial *= k;
  return (n % 2 == 1 ? 1 : -1) * factorial * sum;
}

// erfinv by bisection on erf (erf is increasing): the halvings stop where lo and hi are
// neighbouring doubles (a further one would change neither), at most 200 of them.
double erfinv_ref(double y) {
  if (std::isnan(y) || y < -1 || y > 1) return std::nan("");
  if (y == 1 || y == -1) return std::copysign(std::numeric_limits<double>::infinity(), y);
  double lo = -7, hi = 7;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

Domain between(double low, double high, int64_t int_low, int64_t int_high) {
  Domain d;
  d.low = low;
  d.high = high;
  d.int_low = int_low;
  d.int_high = int_high;
  return d;
}

// An entry of an op with non-tensor arguments: the standard samples once per set of `scalars`
// (the first set labelled as the defaults), and a reference applying f(x, scalars).
OpInfo with_scalars(std::string name, std::vector<std::string> schemas, std::vector<DType> dtypes, Result result,
                    std::vector<std::vector<double>> scalar_sets, Domain domain,
                    std::function<double(double, const std::vector<double>&)> f) {
  OpInfo info;
  info.name = name;
  info.family = OpFamily::Unary;
  info.schemas = std::move(schemas);
  info.dtypes = std::move(dtypes);
  info.differentiable = result != Result::Bool;
  info.samples = [scalar_sets, domain](DType t) {
    std::vector<SampleInput> all;
    for (size_t i = 0; i < scalar_sets.size(); ++i) {
      for (SampleInput& x : elementwise_samples(1, t, {domain})) {
        x.scalars = scalar_sets[i];
        if (i > 0) {
          x.label += ", scalars";
          for (double k : scalar_sets[i]) x.label += fmt::format(" {}", k);
        }
        all.push_back(std::move(x));
      }
    }
    return all;
  };
  info.reference = [f, result](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType t = in[0].dtype;
    const DType r = result == Result::Float && !is_floating(t) ? kDefaultFloat : t;
    return std::vector<RefTensor>{map_unary(in[0], r, [&](double x) { return f(round_to(x, r), s.scalars); })};
  };
  return info;
}

// A bad input carrying scalars (the entry's op reads them).
ErrorInput wrong_dtype_with(const std::string& op, DType dtype, std::vector<double> scalars) {
  ErrorInput bad = wrong_dtype(op, dtype);
  bad.sample.scalars = std::move(scalars);
  return bad;
}

Domain positive() {
  Domain d;
  d.low = 0.05;
  d.high = 8;
  d.int_low = 1;
  return d;
}

}  // namespace

ANATOMY_REGISTER_OPS(unary) {
  std::vector<OpInfo> ops;
  const double kInvSqrt2 = 0.70710678118654752440, kSqrt2OverPi = 0.79788456080286535588;

  // ---- same dtype ----
#define ANATOMY_SAME_DTYPE_ENTRY(n, dtypes, f)                                                                       \
  ops.push_back(unary(                                                                                               \
      #n, dtypes, Result::Same, f, [](const Tensor& a) { return anatomy::n(a); }, [](const Tensor& a) { a.n##_(); }, \
      [](const Tensor& o, const Tensor& a) { anatomy::n##_out(o, a); }))
  ANATOMY_SAME_DTYPE_ENTRY(neg, kNumeric, [](double x) { return -x; });
  ANATOMY_SAME_DTYPE_ENTRY(abs, kNumeric, [](double x) { return std::fabs(x); });
  ANATOMY_SAME_DTYPE_ENTRY(sign, kAll, sign_of);
  ANATOMY_SAME_DTYPE_ENTRY(floor, kNumeric, [](double x) { return std::floor(x); });
  ANATOMY_SAME_DTYPE_ENTRY(ceil, kNumeric, [](double x) { return std::ceil(x); });
  ANATOMY_SAME_DTYPE_ENTRY(round, kNumeric, round_half_even);
  ANATOMY_SAME_DTYPE_ENTRY(trunc, kNumeric, [](double x) { return std::trunc(x); });
  // Integers keep their dtype and wrap (int8 20 * 20 is -112), as PyTorch's pow(x, 2).
  ANATOMY_SAME_DTYPE_ENTRY(square, kNumeric, [](double x) { return x * x; });
  ANATOMY_SAME_DTYPE_ENTRY(relu, kNumeric, [](double x) { return x < 0 ? 0.0 : x; });
#undef ANATOMY_SAME_DTYPE_ENTRY
  // The ops refusing bool (sign keeps it).
  for (OpInfo& e : ops) {
    if (e.name == "sign") continue;
    const std::string op = e.name;
    e.error_inputs = [op] { return std::vector<ErrorInput>{wrong_dtype(op, DType::Bool)}; };
  }
  ops.back().bench_input = bench_one;  // relu
  // Rounding an fp16 value near 0.5 is exact, so the standard samples suffice; these pin the
  // half-to-even ties.
  for (OpInfo& round : ops) {
    if (round.name != "round") continue;
    auto standard = round.samples;
    round.samples = [standard](DType t) {
      std::vector<SampleInput> s = standard(t);
      if (is_floating(t)) {
        SampleInput ties;
        ties.label = "ties";
        ties.tensors = {
            tensor(std::vector<double>{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5}, {8}, DType::Float64).to(t)};
        s.push_back(ties);
      }
      return s;
    };
  }

  // ---- floating results (integers and bool give fp32) ----
#define ANATOMY_FLOAT_ENTRY(n, f, ...)                                                                              \
  ops.push_back(unary(                                                                                              \
      #n, kAll, Result::Float, f, [](const Tensor& a) { return anatomy::n(a); }, [](const Tensor& a) { a.n##_(); }, \
      [](const Tensor& o, const Tensor& a) { anatomy::n##_out(o, a); }, ##__VA_ARGS__))
  Domain above_minus_one;
  above_minus_one.low = -0.9;
  above_minus_one.int_low = 0;
  Domain no_pole;  // tan away from +-pi/2, so fp16 results stay in range
  no_pole.low = -1.4;
  no_pole.high = 1.4;
  no_pole.int_low = -3;
  no_pole.int_high = 4;
  Domain nonzero;
  nonzero.exclude_zero = true;
  ANATOMY_FLOAT_ENTRY(exp, [](double x) { return std::exp(x); });
  ops.back().bench_input = bench_one;
  ANATOMY_FLOAT_ENTRY(exp2, [](double x) { return std::exp2(x); });
  ANATOMY_FLOAT_ENTRY(expm1, [](double x) { return std::expm1(x); });
  ANATOMY_FLOAT_ENTRY(
      log, [](double x) { return std::log(x); }, positive());
  ANATOMY_FLOAT_ENTRY(
      log1p, [](double x) { return std::log1p(x); }, above_minus_one);
  ANATOMY_FLOAT_ENTRY(
      log2, [](double x) { return std::log2(x); }, positive());
  ANATOMY_FLOAT_ENTRY(
      sqrt, [](double x) { return std::sqrt(x); }, positive());
  ANATOMY_FLOAT_ENTRY(
      rsqrt, [](double x) { return 1.0 / std::sqrt(x); }, positive());
  ANATOMY_FLOAT_ENTRY(sin, [](double x) { return std::sin(x); });
  ANATOMY_FLOAT_ENTRY(cos, [](double x) { return std::cos(x); });
  ANATOMY_FLOAT_ENTRY(
      tan, [](double x) { return std::tan(x); }, no_pole);
  ANATOMY_FLOAT_ENTRY(sinh, [](double x) { return std::sinh(x); });
  ANATOMY_FLOAT_ENTRY(cosh, [](double x) { return std::cosh(x); });
  ANATOMY_FLOAT_ENTRY(tanh, [](double x) { return std::tanh(x); });
  ANATOMY_FLOAT_ENTRY(sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  ops.back().bench_input = bench_one;
  // x / (1 + exp(-x)): NaN at -inf, as PyTorch's.
  ANATOMY_FLOAT_ENTRY(silu, [](double x) { return x / (1.0 + std::exp(-x)); });
  ANATOMY_FLOAT_ENTRY(erf, [](double x) { return std::erf(x); });
  ANATOMY_FLOAT_ENTRY(
      reciprocal, [](double x) { return 1.0 / x; }, nonzero);
  ANATOMY_FLOAT_ENTRY(
      log10, [](double x) { return std::log10(x); }, positive());
  // Inside (-1, 1) (the integers -1, 0 and 1 reach the ends), so gradchecks stay off the edges.
  const Domain unit = between(-0.95, 0.95, -1, 2);
  ANATOMY_FLOAT_ENTRY(
      asin, [](double x) { return std::asin(x); }, unit);
  ANATOMY_FLOAT_ENTRY(
      acos, [](double x) { return std::acos(x); }, unit);
  ANATOMY_FLOAT_ENTRY(atan, [](double x) { return std::atan(x); });
  ANATOMY_FLOAT_ENTRY(asinh, [](double x) { return std::asinh(x); });
  ANATOMY_FLOAT_ENTRY(
      acosh, [](double x) { return std::acosh(x); }, between(1.05, 8, 1, 20));
  ANATOMY_FLOAT_ENTRY(
      atanh, [](double x) { return std::atanh(x); }, unit);
  // Positive floats, away from the poles for the gradchecks; the integers meet the poles at 0
  // and below (lgamma inf; digamma -inf at 0, NaN below).
  const Domain gamma = between(0.1, 6, -20, 20);
  ANATOMY_FLOAT_ENTRY(
      lgamma, [](double x) { return std::lgamma(x); }, gamma);
  ANATOMY_FLOAT_ENTRY(digamma, digamma_ref, gamma);
  // fp32's recurrence cancels near digamma's root (x = 1.46): a few fp32 ulp of 1, not of the result.
  ops.back().tolerance = [](DType t) {
    Tolerance tol = default_tolerance(t);
    if (t == DType::Float32) tol.atol = 1e-5;
    return tol;
  };
  ANATOMY_FLOAT_ENTRY(erfc, [](double x) { return std::erfc(x); });
  ANATOMY_FLOAT_ENTRY(erfinv, erfinv_ref, between(-0.99, 0.99, -1, 2));
#undef ANATOMY_FLOAT_ENTRY

  // ---- floating inputs only, the dtype kept ----
#define ANATOMY_FLOATING_ENTRY(n, f)                                                                         \
  ops.push_back(unary(                                                                                       \
      #n, kFloating, Result::Same, f, [](const Tensor& a) { return anatomy::n(a); },                         \
      [](const Tensor& a) { a.n##_(); }, [](const Tensor& o, const Tensor& a) { anatomy::n##_out(o, a); })); \
  ops.back().error_inputs = [] { return std::vector<ErrorInput>{wrong_dtype(#n, DType::Int64)}; }
  // x - trunc(x): NaN at +-inf.
  ANATOMY_FLOATING_ENTRY(frac, [](double x) { return x - std::trunc(x); });
  ANATOMY_FLOATING_ENTRY(mish, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); });
  ANATOMY_FLOATING_ENTRY(hardswish, [](double x) { return x * std::min(std::max(x + 3, 0.0), 6.0) / 6; });
  ANATOMY_FLOATING_ENTRY(hardsigmoid, [](double x) { return std::min(std::max(x + 3, 0.0), 6.0) / 6; });
#undef ANATOMY_FLOATING_ENTRY

  // ---- polygamma(n, x), n from the sample's scalars ----
  {
    OpInfo e = with_scalars("polygamma", {"polygamma", "polygamma_", "polygamma.out"}, kAll, Result::Float,
                            {{1}, {0}, {2}, {3}}, between(0.1, 6, 1, 20),
                            [](double x, const std::vector<double>& k) { return polygamma_ref(int(k[0]), x); });
    e.op = [](const SampleInput& s) {
      return std::vector<Tensor>{polygamma(static_cast<int64_t>(s.scalars[0]), s.tensors[0])};
    };
    e.inplace = [](const SampleInput& s) { s.tensors[0].polygamma_(static_cast<int64_t>(s.scalars[0])); };
    e.out = [](const Tensor& o, const SampleInput& s) {
      polygamma_out(o, static_cast<int64_t>(s.scalars[0]), s.tensors[0]);
    };
    e.tolerance = [](DType t) {
      Tolerance tol = default_tolerance(t);
      if (t == DType::Float32) tol.atol = 1e-5, tol.rtol = 1e-5;
      return tol;
    };
    e.error_inputs = [] {
      SampleInput s;
      s.label = "n=-1";
      s.tensors = {random_tensor({2, 3}, DType::Float32)};
      s.scalars = {-1};
      return std::vector<ErrorInput>{{s, &typeid(ValueError), {"polygamma", "-1"}}};
    };
    ops.push_back(e);
  }

  // ---- logit: without eps, and eps = 0.2 (the samples' scalars) ----
  {
    auto eps_of = [](const SampleInput& s) {
      return s.scalars.empty() ? std::nullopt : std::optional<double>(s.scalars[0]);
    };
    OpInfo e = with_scalars("logit", {"logit", "logit_", "logit.out"}, kAll, Result::Float, {{}, {0.2}},
                            between(0.02, 0.98, 0, 2), [](double x, const std::vector<double>& k) {
                              if (!k.empty()) x = x < k[0] ? k[0] : x > 1 - k[0] ? 1 - k[0] : x;
                              return std::log(x / (1 - x));
                            });
    e.op = [eps_of](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].logit(eps_of(s))}; };
    e.inplace = [eps_of](const SampleInput& s) { s.tensors[0].logit_(eps_of(s)); };
    e.out = [eps_of](const Tensor& o, const SampleInput& s) { logit_out(o, s.tensors[0], eps_of(s)); };
    ops.push_back(e);
  }

  // ---- activations with arguments: the defaults, then other values ----
  {
    OpInfo e = with_scalars("leaky_relu", {"leaky_relu", "leaky_relu_", "leaky_relu.out"}, kFloating, Result::Same,
                            {{0.01}, {0.2}}, Domain{},
                            [](double x, const std::vector<double>& k) { return x > 0 ? x : x * k[0]; });
    e.op = [](const SampleInput& s) { return std::vector<Tensor>{leaky_relu(s.tensors[0], s.scalars[0])}; };
    e.inplace = [](const SampleInput& s) { leaky_relu_(s.tensors[0], s.scalars[0]); };
    e.out = [](const Tensor& o, const SampleInput& s) { leaky_relu_out(o, s.tensors[0], s.scalars[0]); };
    e.error_inputs = [] { return std::vector<ErrorInput>{wrong_dtype_with("leaky_relu", DType::Int64, {0.01})}; };
    ops.push_back(e);
  }
  {
    // Integer tensors keep their dtype (the bounds are whole numbers here). min_val above max_val
    // gives max_val everywhere, as PyTorch's clamp does.
    OpInfo e = with_scalars("hardtanh", {"hardtanh", "hardtanh_", "hardtanh.out"}, kNumeric, Result::Same,
                            {{-1, 1}, {-2, 3}, {2, 1}}, Domain{}, [](double x, const std::vector<double>& k) {
                              return std::isnan(x) ? x : std::min(std::max(x, k[0]), k[1]);
                            });
    e.op = [](const SampleInput& s) { return std::vector<Tensor>{hardtanh(s.tensors[0], s.scalars[0], s.scalars[1])}; };
    e.inplace = [](const SampleInput& s) { hardtanh_(s.tensors[0], s.scalars[0], s.scalars[1]); };
    e.out = [](const Tensor& o, const SampleInput& s) { hardtanh_out(o, s.tensors[0], s.scalars[0], s.scalars[1]); };
    e.error_inputs = [] { return std::vector<ErrorInput>{wrong_dtype_with("hardtanh", DType::Bool, {-1, 1})}; };
    ops.push_back(e);
  }
  {
    OpInfo e = with_scalars(
        "elu", {"elu", "elu_", "elu.out"}, kFloating, Result::Same, {{1, 1, 1}, {0.5, 2, 1.5}}, Domain{},
        [](double x, const std::vector<double>& k) { return x <= 0 ? std::expm1(x * k[2]) * k[0] * k[1] : x * k[1]; });
    e.op = [](const SampleInput& s) {
      return std::vector<Tensor>{elu(s.tensors[0], s.scalars[0], s.scalars[1], s.scalars[2])};
    };
    e.inplace = [](const SampleInput& s) { elu_(s.tensors[0], s.scalars[0], s.scalars[1], s.scalars[2]); };
    e.out = [](const Tensor& o, const SampleInput& s) {
      elu_out(o, s.tensors[0], s.scalars[0], s.scalars[1], s.scalars[2]);
    };
    e.error_inputs = [] { return std::vector<ErrorInput>{wrong_dtype_with("elu", DType::Int32, {1, 1, 1})}; };
    ops.push_back(e);
  }
  {
    const double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
    OpInfo e = unary(
        "selu", kFloating, Result::Same, [=](double x) { return x <= 0 ? std::expm1(x) * alpha * scale : x * scale; },
        [](const Tensor& a) { return selu(a); }, [](const Tensor& a) { selu_(a); }, nullptr);
    e.error_inputs = [] { return std::vector<ErrorInput>{wrong_dtype("selu", DType::Int64)}; };
    ops.push_back(e);
  }

  // ---- gelu, softplus: floating inputs only ----
  for (const std::string approximate : {"none", "tanh"}) {
    std::function<double(double)> f;
    if (approximate == "none") f = [=](double x) { return x * 0.5 * (1.0 + std::erf(x * kInvSqrt2)); };
    else f = [=](double x) { return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x))); };
    OpInfo e = unary(
        approximate == "none" ? "gelu" : "gelu_tanh", kFloating, Result::Same, f,
        [approximate](const Tensor& a) { return a.gelu(approximate); },
        [approximate](const Tensor& a) { gelu_(a, approximate); },
        [approximate](const Tensor& o, const Tensor& a) { gelu_out(o, a, approximate); });
    e.schemas = {"gelu", "gelu_", "gelu.out"};
    if (approximate == "none") {
      e.bench_input = bench_one;
      e.error_inputs = [] {
        std::vector<ErrorInput> bad = {wrong_dtype("gelu", DType::Int64)};
        SampleInput s;
        s.label = "approximate='fast'";
        s.tensors = {random_tensor({3}, DType::Float32)};
        // Routed through the op with an unknown string by the entry below.
        bad.push_back({s, &typeid(ValueError), {"gelu", "fast"}});
        return bad;
      };
      // The bad-input sample above is told apart by its label.
      e.op = [](const SampleInput& s) {
        return std::vector<Tensor>{s.label == "approximate='fast'" ? s.tensors[0].gelu("fast") : s.tensors[0].gelu()};
      };
    } else {
      e.notes = "approximate='tanh'";
    }
    ops.push_back(e);
  }
  {
    // beta and threshold from the sample's scalars; the samples try the defaults and beta = 2,
    // threshold = 3, so both branches of the threshold are met.
    OpInfo e;
    e.name = "softplus";
    e.family = OpFamily::Unary;
    e.schemas = {"softplus", "softplus.out"};
    e.dtypes = kFloating;
    e.differentiable = true;
    e.samples = [](DType t) {
      std::vector<SampleInput> s = elementwise_samples(1, t, {Domain{}});
      for (SampleInput& x : elementwise_samples(1, t, {Domain{}})) {
        x.label += ", beta=2 threshold=3";
        x.scalars = {2, 3};
        s.push_back(x);
      }
      for (SampleInput& x : s) {
        if (x.scalars.empty()) x.scalars = {1, 20};
      }
      return s;
    };
    e.op = [](const SampleInput& s) { return std::vector<Tensor>{softplus(s.tensors[0], s.scalars[0], s.scalars[1])}; };
    e.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
      const double beta = s.scalars[0], threshold = s.scalars[1];
      return std::vector<RefTensor>{map_unary(in[0], in[0].dtype, [=](double x) {
        return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
      })};
    };
    e.out = [](const Tensor& o, const SampleInput& s) { softplus_out(o, s.tensors[0], s.scalars[0], s.scalars[1]); };
    e.error_inputs = [] {
      ErrorInput bad = wrong_dtype("softplus", DType::Int32);
      bad.sample.scalars = {1, 20};
      return std::vector<ErrorInput>{bad};
    };
    ops.push_back(e);
  }

  // ---- nan_to_num: defaults, and given replacements (sample scalars: nan, posinf, neginf) ----
  {
    OpInfo e;
    e.name = "nan_to_num";
    e.family = OpFamily::Unary;
    e.schemas = {"nan_to_num", "nan_to_num_", "nan_to_num.out"};
    e.dtypes = kAll;
    e.differentiable = true;
    e.samples = [](DType t) {
      std::vector<SampleInput> s = elementwise_samples(1, t, {Domain{}});
      for (SampleInput& x : elementwise_samples(1, t, {Domain{}})) {
        x.label += ", nan=1.5 posinf=100 neginf=-7";
        x.scalars = {1.5, 100, -7};
        s.push_back(x);
      }
      return s;
    };
    auto args = [](const SampleInput& s, int i) {
      return s.scalars.empty() ? std::nullopt : std::optional<double>(s.scalars[i]);
    };
    e.op = [args](const SampleInput& s) {
      return std::vector<Tensor>{s.tensors[0].nan_to_num(args(s, 0), args(s, 1), args(s, 2))};
    };
    e.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
      const DType t = in[0].dtype;
      const bool given = !s.scalars.empty();
      const double nan = given ? s.scalars[0] : 0, posinf = given ? s.scalars[1] : largest(t),
                   neginf = given ? s.scalars[2] : -largest(t);
      return std::vector<RefTensor>{map_unary(in[0], t, [=](double x) {
        if (std::isnan(x)) return nan;
        if (std::isinf(x)) return x > 0 ? posinf : neginf;
        return x;
      })};
    };
    e.inplace = [args](const SampleInput& s) { nan_to_num_(s.tensors[0], args(s, 0), args(s, 1), args(s, 2)); };
    e.out = [args](const Tensor& o, const SampleInput& s) {
      nan_to_num_out(o, s.tensors[0], args(s, 0), args(s, 1), args(s, 2));
    };
    ops.push_back(e);
  }

  // ---- bool results ----
  ops.push_back(unary(
      "isnan", kAll, Result::Bool, [](double x) { return double(std::isnan(x)); },
      [](const Tensor& a) { return a.isnan(); }, nullptr, nullptr));
  ops.push_back(unary(
      "isinf", kAll, Result::Bool, [](double x) { return double(std::isinf(x)); },
      [](const Tensor& a) { return a.isinf(); }, nullptr, nullptr));
  ops.push_back(unary(
      "isfinite", kAll, Result::Bool, [](double x) { return double(std::isfinite(x)); },
      [](const Tensor& a) { return a.isfinite(); }, nullptr, nullptr));
  ops.push_back(unary(
      "signbit", kAll, Result::Bool, [](double x) { return double(std::signbit(x)); },
      [](const Tensor& a) { return a.signbit(); }, nullptr,
      [](const Tensor& o, const Tensor& a) { signbit_out(o, a); }));
  ops.push_back(unary(
      "isposinf", kAll, Result::Bool, [](double x) { return double(std::isinf(x) && x > 0); },
      [](const Tensor& a) { return a.isposinf(); }, nullptr,
      [](const Tensor& o, const Tensor& a) { isposinf_out(o, a); }));
  ops.push_back(unary(
      "isneginf", kAll, Result::Bool, [](double x) { return double(std::isinf(x) && x < 0); },
      [](const Tensor& a) { return a.isneginf(); }, nullptr,
      [](const Tensor& o, const Tensor& a) { isneginf_out(o, a); }));
  // Their out= tensor must be bool.
  for (OpInfo& e : ops) {
    if (e.name != "signbit" && e.name != "isposinf" && e.name != "isneginf") continue;
    const std::string op = e.name;
    auto call = e.out;
    e.error_inputs = [op] {
      SampleInput s;
      s.label = "float out=";
      s.tensors = {random_tensor({2, 3}, DType::Float32), random_tensor({2, 3}, DType::Float32)};
      return std::vector<ErrorInput>{{s, &typeid(TypeError), {op, "bool"}}};
    };
    auto functional = e.op;
    // The bad-input sample carries its out= tensor as the second tensor.
    e.op = [functional, call](const SampleInput& s) {
      if (s.tensors.size() == 2) {
        call(s.tensors[1], s);
        return std::vector<Tensor>{s.tensors[1]};
      }
      return functional(s);
    };
  }
  ops.push_back(unary(
      "logical_not", kAll, Result::Bool, [](double x) { return double(x == 0); }, [](const Tensor& a) { return !a; },
      [](const Tensor& a) { logical_not_(a); }, [](const Tensor& o, const Tensor& a) { logical_not_out(o, a); }));

  // ---- bitwise_not: integers and bool ----
  {
    OpInfo e = unary(
        "bitwise_not", kIntegral, Result::Same, [](double x) { return -x - 1; }, [](const Tensor& a) { return ~a; },
        [](const Tensor& a) { bitwise_not_(a); }, [](const Tensor& o, const Tensor& a) { bitwise_not_out(o, a); });
    e.differentiable = false;
    // On bool, ~ is logical not; the generic reference's -x - 1 is for two's complement integers.
    auto integer_ref = e.reference;
    e.reference = [integer_ref](const std::vector<RefTensor>& in, const SampleInput& s) {
      if (in[0].dtype != DType::Bool) return integer_ref(in, s);
      return std::vector<RefTensor>{map_unary(in[0], DType::Bool, [](double x) { return double(x == 0); })};
    };
    e.error_inputs = [] { return std::vector<ErrorInput>{wrong_dtype("bitwise_not", DType::Float32)}; };
    ops.push_back(e);
  }

  // ---- casts: _to_copy from every dtype to every dtype ----
  for (DType target : kAll) {
    OpInfo e;
    e.name = fmt::format("_to_copy_{}", name(target));
    e.family = OpFamily::Unary;
    e.schemas = {"_to_copy"};
    e.dtypes = kAll;
    e.differentiable = is_floating(target);
    e.notes = fmt::format("cast to {}", name(target));
    e.samples = [target](DType t) {
      // Out-of-range float -> integer conversions are undefined (as in PyTorch): the samples
      // stay in range, and keep NaN and infinities for floating and bool targets only.
      Domain d;
      if (target == DType::UInt8) d.low = 0, d.int_low = 0;
      std::vector<SampleInput> s = elementwise_samples(1, t, {d});
      if (!is_floating(target) && target != DType::Bool) {
        std::erase_if(s, [](const SampleInput& x) { return x.label == "special values"; });
      }
      return s;
    };
    e.op = [target](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].to(target)}; };
    // Floats to integers truncate toward zero; anything to bool is "nonzero" (round_to does
    // both); integers to narrower integers wrap.
    e.reference = [target](const std::vector<RefTensor>& in, const SampleInput&) {
      return std::vector<RefTensor>{map_unary(in[0], target, [target](double x) {
        if (target == DType::Bool) return x != 0 ? 1.0 : 0.0;  // NaN is nonzero
        if (is_floating(target)) return x;
        return wrap_integer(std::trunc(x), target);
      })};
    };
    ops.push_back(e);
  }
  return ops;
}

}  // namespace anatomy::testing
