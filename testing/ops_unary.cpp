// Op-table entries: element-wise unary operators, and the casts between every pair of dtypes.
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
#undef ANATOMY_FLOAT_ENTRY

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
