// Op-table entries: element-wise binary and ternary operators.
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
const std::vector<DType> kIntegers = {DType::UInt8, DType::Int8, DType::Int32, DType::Int64};
const std::vector<DType> kIntegersAndBool = {DType::Bool, DType::UInt8, DType::Int8, DType::Int32, DType::Int64};
const std::vector<DType> kFloating = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Values that keep products and sums of 8-bit integers in range (wrapping is not under test).
Domain small() {
  Domain d;
  d.int_low = -9;
  d.int_high = 10;
  return d;
}
Domain nonzero() {
  Domain d = small();
  d.exclude_zero = true;
  return d;
}
Domain range(double low, double high, int64_t int_low, int64_t int_high) {
  Domain d;
  d.low = low, d.high = high, d.int_low = int_low, d.int_high = int_high;
  return d;
}

// The dtype an entry's result has, from the promoted dtype of its inputs.
enum class Result { Promoted, IntToFloat, Bool };

using Fn2 = std::function<Tensor(const Tensor&, const Tensor&)>;
using Inplace2 = std::function<void(const Tensor&, const Tensor&)>;
using Out2 = std::function<void(const Tensor&, const Tensor&, const Tensor&)>;
// The reference of one element: f(a, b, t) with a and b already rounded to the computation dtype t.
using Ref2 = std::function<double(double, double, DType)>;

SampleInput bad_sample(std::string label, std::vector<Tensor> tensors) {
  SampleInput s;
  s.label = std::move(label);
  s.tensors = std::move(tensors);
  return s;
}

// A binary entry over the standard element-wise samples, with the schemas {name.Tensor,
// name_.Tensor, name.out} unless changed, and a "shapes do not broadcast" bad input.
OpInfo binary(std::string name, std::vector<DType> dtypes, Ref2 f, Fn2 fn, Inplace2 inplace, Out2 out,
              Result result = Result::Promoted, std::vector<Domain> domains = {small()}, bool mixed = true) {
  OpInfo info;
  info.name = name;
  info.family = OpFamily::Binary;
  info.schemas = {name + ".Tensor", name + "_.Tensor", name + ".out"};
  info.dtypes = std::move(dtypes);
  info.differentiable = result != Result::Bool;
  info.samples = [domains, mixed](DType t) { return elementwise_samples(2, t, domains, mixed); };
  info.op = [fn](const SampleInput& s) { return std::vector<Tensor>{fn(s.tensors[0], s.tensors[1])}; };
  info.reference = [f, result](const std::vector<RefTensor>& in, const SampleInput& s) {
    DType t = promoted_dtype(s.tensors);
    if (result == Result::IntToFloat && !is_floating(t)) t = kDefaultFloat;
    // The kernel computes in the promoted dtype: inputs are first rounded to it.
    auto fa = [&](double a, double b) { return f(round_to(a, t), round_to(b, t), t); };
    return std::vector<RefTensor>{map_binary(in[0], in[1], result == Result::Bool ? DType::Bool : t, fa)};
  };
  if (inplace) info.inplace = [inplace](const SampleInput& s) { inplace(s.tensors[0], s.tensors[1]); };
  if (out) info.out = [out](const Tensor& o, const SampleInput& s) { out(o, s.tensors[0], s.tensors[1]); };
  // The message names the operator: div_trunc's is div's.
  info.error_inputs = [op = name.rfind("div_", 0) == 0 ? std::string("div") : name] {
    return std::vector<ErrorInput>{{bad_sample("shapes that do not broadcast", {randn({2, 3}), randn({4})}),
                                    &typeid(ValueError),
                                    {op, "[2, 3]", "[4]"}}};
  };
  return info;
}

OpInfo& with_bench(OpInfo& info) {
  info.bench_input = [](int64_t n) {
    SampleInput s;
    s.tensors = {randn({n}), randn({n})};
    return s;
  };
  return info;
}

OpInfo& with_errors(OpInfo& info, std::vector<ErrorInput> more) {
  auto base = info.error_inputs;
  info.error_inputs = [base, more] {
    std::vector<ErrorInput> all = base ? base() : std::vector<ErrorInput>{};
    all.insert(all.end(), more.begin(), more.end());
    return all;
  };
  return info;
}

// The number of value bits of an integer dtype.
int bits_of(DType t) { return static_cast<int>(element_size(t)) * 8; }
// An integer value wrapped into dtype t (two's complement), as the kernels' arithmetic wraps.
double wrap_int(uint64_t v, DType t) {
  switch (t) {
    case DType::UInt8:
      return static_cast<uint8_t>(v);
    case DType::Int8:
      return static_cast<int8_t>(v);
    case DType::Int32:
      return static_cast<int32_t>(v);
    default:
      return static_cast<double>(static_cast<int64_t>(v));
  }
}

// PyTorch's floor division and remainder of floats, from fmod (exact); integers are exact in
// fp64 at these sizes.
double floor_div(double a, double b, DType t) {
  if (!is_floating(t)) return std::floor(a / b);
  if (b == 0) return a / b;
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double fl = std::floor(div);
  if (div - fl > 0.5) fl += 1;
  return fl;
}
double python_mod(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}
double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b); }

void add_arithmetic(std::vector<OpInfo>& ops) {
  // bool + bool is logical or and bool * bool logical and: the reference's rounding to bool agrees.
  OpInfo add = binary(
      "add", kAll, [](double a, double b, DType) { return a + b; },
      [](const Tensor& a, const Tensor& b) { return a + b; }, [](const Tensor& a, const Tensor& b) { a.add_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { add_out(o, a, b); });
  ops.push_back(with_bench(add));

  OpInfo add_alpha = binary(
      "add_alpha", kNumeric, [](double a, double b, DType) { return a + 3 * b; },
      [](const Tensor& a, const Tensor& b) { return anatomy::add(a, b, 3); },
      [](const Tensor& a, const Tensor& b) { a.add_(b, 3); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { add_out(o, a, b, 3); });
  add_alpha.notes = "add with alpha = 3";
  add_alpha.schemas = {"add.Tensor", "add_.Tensor", "add.out"};
  add_alpha.error_inputs = nullptr;  // add's
  ops.push_back(add_alpha);

  OpInfo sub = binary(
      "sub", kNumeric, [](double a, double b, DType) { return a - b; },
      [](const Tensor& a, const Tensor& b) { return a - b; }, [](const Tensor& a, const Tensor& b) { a.sub_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { sub_out(o, a, b); });
  with_errors(sub, {{bad_sample("bool operands", {tensor({true, false}), tensor({true, true})}),
                     &typeid(TypeError),
                     {"sub", "bool"}}});
  ops.push_back(with_bench(sub));

  OpInfo mul = binary(
      "mul", kAll, [](double a, double b, DType) { return a * b; },
      [](const Tensor& a, const Tensor& b) { return a * b; }, [](const Tensor& a, const Tensor& b) { a.mul_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { mul_out(o, a, b); });
  ops.push_back(with_bench(mul));

  OpInfo div = binary(
      "div", kAll, [](double a, double b, DType) { return a / b; },
      [](const Tensor& a, const Tensor& b) { return a / b; }, [](const Tensor& a, const Tensor& b) { a.div_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { div_out(o, a, b); }, Result::IntToFloat,
      {small(), nonzero()});
  ops.push_back(with_bench(div));

  // Rounding division keeps integer dtypes; an integer zero divisor raises before writing.
  for (const char* mode : {"trunc", "floor"}) {
    const bool trunc = std::string(mode) == "trunc";
    OpInfo e = binary(
        std::string("div_") + mode, kNumeric,
        [trunc](double a, double b, DType t) { return trunc ? std::trunc(a / b) : floor_div(a, b, t); },
        [mode](const Tensor& a, const Tensor& b) { return anatomy::div(a, b, mode); },
        [mode](const Tensor& a, const Tensor& b) { a.div_(b, mode); },
        [mode](const Tensor& o, const Tensor& a, const Tensor& b) { div_out(o, a, b, mode); }, Result::Promoted,
        {small(), nonzero()});
    e.schemas = {"div.Tensor_mode", "div_.Tensor_mode", "div.out_mode"};
    e.notes = std::string("div with rounding_mode='") + mode + "'";
    e.differentiable = true;  // piecewise constant: a zero gradient, as PyTorch's
    with_errors(e,
                {{bad_sample("integer division by zero", {tensor({7, 8, 9}), tensor({1, 0, 2})}),
                  &typeid(ValueError),
                  {"div", "division by zero"}},
                 {bad_sample("bool operands", {tensor({true}), tensor({true})}), &typeid(TypeError), {"div", "bool"}}});
    ops.push_back(e);
  }

  OpInfo remainder = binary(
      "remainder", kNumeric, [](double a, double b, DType) { return python_mod(a, b); },
      [](const Tensor& a, const Tensor& b) { return a % b; }, [](const Tensor& a, const Tensor& b) { a.remainder_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { remainder_out(o, a, b); }, Result::Promoted,
      {small(), nonzero()});
  remainder.schemas = {"remainder.Tensor", "remainder_.Tensor", "remainder.Tensor_out"};
  with_errors(remainder, {{bad_sample("integer division by zero", {tensor({7, 8}), tensor({0, 2})}),
                           &typeid(ValueError),
                           {"remainder", "division by zero"}}});
  ops.push_back(remainder);

  OpInfo fmod = binary(
      "fmod", kNumeric, [](double a, double b, DType) { return std::fmod(a, b); },
      [](const Tensor& a, const Tensor& b) { return anatomy::fmod(a, b); },
      [](const Tensor& a, const Tensor& b) { a.fmod_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { fmod_out(o, a, b); }, Result::Promoted,
      {small(), nonzero()});
  fmod.schemas = {"fmod.Tensor", "fmod_.Tensor", "fmod.Tensor_out"};
  with_errors(fmod, {{bad_sample("integer division by zero", {tensor({7, 8}), tensor({2, 0})}),
                      &typeid(ValueError),
                      {"fmod", "division by zero"}}});
  ops.push_back(fmod);

  // Integer exponents non-negative and small (no wrapping); float bases of both signs.
  OpInfo pow = binary(
      "pow", kNumeric, [](double a, double b, DType) { return std::pow(a, b); },
      [](const Tensor& a, const Tensor& b) { return anatomy::pow(a, b); },
      [](const Tensor& a, const Tensor& b) { a.pow_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { pow_out(o, a, b); }, Result::Promoted,
      {range(-3, 3, -4, 5), range(-2, 3, 0, 4)});
  pow.schemas = {"pow.Tensor_Tensor", "pow_.Tensor", "pow.Tensor_Tensor_out"};
  // Positive bases: a fractional power of a negative base is NaN, where the derivative does not
  // exist; these small samples (a transposed and an offset base) are where it is checked.
  pow.samples = [base = pow.samples](DType t) {
    std::vector<SampleInput> v = base(t);
    if (!is_floating(t)) return v;
    const Domain positive{0.5, 3}, exponent{-2, 3};
    v.push_back(make_sample("positive bases, transposed",
                            {random_tensor({3, 2}, t, positive).t(), random_tensor({2, 3}, t, exponent)}));
    v.push_back(make_sample("positive bases, offset", {random_tensor({3, 3}, t, positive).slice(0, 1).slice(1, 1),
                                                       random_tensor({2, 2}, t, exponent)}));
    return v;
  };
  pow.tolerance = [](DType t) {
    Tolerance tol = default_tolerance(t);
    if (t == DType::Float32) tol.rtol = 1e-5;  // powf is not correctly rounded
    return tol;
  };
  with_errors(pow, {{bad_sample("integer to a negative power", {tensor({2, 3}), tensor({1, -1})}),
                     &typeid(ValueError),
                     {"pow", "negative integer powers"}},
                    {bad_sample("integer to a negative Scalar power", {tensor({2, 3}), scalar_tensor(-2)}),
                     &typeid(ValueError),
                     {"pow", "negative"}}});
  ops.push_back(pow);

  OpInfo pow_base;
  pow_base.name = "pow_scalar_base";
  pow_base.family = OpFamily::Binary;
  pow_base.notes = "pow(2.5, tensor)";
  pow_base.schemas = {"pow.Tensor_Tensor"};
  pow_base.dtypes = kNumeric;
  pow_base.differentiable = true;
  pow_base.samples = [](DType t) { return elementwise_samples(1, t, {range(-2, 3, 0, 5)}); };
  pow_base.op = [](const SampleInput& s) { return std::vector<Tensor>{anatomy::pow(Scalar(2.5), s.tensors[0])}; };
  pow_base.tolerance = pow.tolerance;
  pow_base.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType t = is_floating(s.tensors[0].dtype()) ? s.tensors[0].dtype() : kDefaultFloat;
    return std::vector<RefTensor>{map_unary(in[0], t, [t](double e) { return std::pow(2.5, round_to(e, t)); })};
  };
  ops.push_back(pow_base);

  OpInfo atan2 = binary(
      "atan2", kAll, [](double a, double b, DType) { return std::atan2(a, b); },
      [](const Tensor& a, const Tensor& b) { return anatomy::atan2(a, b); },
      [](const Tensor& a, const Tensor& b) { a.atan2_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { atan2_out(o, a, b); }, Result::IntToFloat);
  atan2.schemas = {"atan2", "atan2_", "atan2.out"};
  ops.push_back(atan2);

  // Floating operands only, as in PyTorch (an integer tensor is a TypeError).
  OpInfo hypot = binary(
      "hypot", kFloating, [](double a, double b, DType) { return std::hypot(a, b); },
      [](const Tensor& a, const Tensor& b) { return anatomy::hypot(a, b); },
      [](const Tensor& a, const Tensor& b) { a.hypot_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { hypot_out(o, a, b); });
  hypot.schemas = {"hypot", "hypot_", "hypot.out"};
  ops.push_back(hypot);

  // div with rounding_mode 'floor' under its own name: integers keep their dtype, an integer zero
  // divisor raises before writing.
  OpInfo floor_divide = binary(
      "floor_divide", kNumeric, [](double a, double b, DType t) { return floor_div(a, b, t); },
      [](const Tensor& a, const Tensor& b) { return anatomy::floor_divide(a, b); },
      [](const Tensor& a, const Tensor& b) { a.floor_divide_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { floor_divide_out(o, a, b); }, Result::Promoted,
      {small(), nonzero()});
  floor_divide.schemas = {"floor_divide", "floor_divide_.Tensor", "floor_divide.out"};
  // Piecewise constant: a zero gradient for both operands (PyTorch's derivatives.yaml gives
  // zeros_like), gradchecked away from the steps, as div's rounding modes.
  floor_divide.differentiable = true;
  with_errors(
      floor_divide,
      {{bad_sample("integer division by zero", {tensor({7, -8, 9}), tensor({1, 0, 2})}),
        &typeid(ValueError),
        {"floor_divide", "division by zero"}},
       {bad_sample("bool operands", {tensor({true}), tensor({true})}), &typeid(TypeError), {"floor_divide", "bool"}}});
  ops.push_back(floor_divide);

  // log(exp(a) + exp(b)) and log2(2^a + 2^b): floating operands only, as in PyTorch; no in-place
  // schema (logaddexp_ is the out= form into self).
  for (const bool base2 : {false, true}) {
    const std::string name = base2 ? "logaddexp2" : "logaddexp";
    OpInfo e = binary(
        name, kFloating,
        [base2](double a, double b, DType) {
          if (std::isinf(a) && a == b) return a;
          const double m = std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b), d = std::fabs(a - b);
          return base2 ? m + std::log1p(std::exp2(-d)) / std::log(2.0) : m + std::log1p(std::exp(-d));
        },
        [base2](const Tensor& a, const Tensor& b) {
          return base2 ? anatomy::logaddexp2(a, b) : anatomy::logaddexp(a, b);
        },
        [base2](const Tensor& a, const Tensor& b) { base2 ? a.logaddexp2_(b) : a.logaddexp_(b); },
        [base2](const Tensor& o, const Tensor& a, const Tensor& b) {
          base2 ? logaddexp2_out(o, a, b) : logaddexp_out(o, a, b);
        });
    e.schemas = {name, name + ".out"};
    with_errors(e, {{bad_sample("integer operands", {tensor({1, 2}), tensor({3, 4})}),
                     &typeid(TypeError),
                     {name, "floating", "int64"}}});
    ops.push_back(e);
  }

  // self * log(other), 0 where self == 0 unless other is NaN; integers and bool promote to float.
  // other mostly positive (a negative one gives NaN, which the special-value samples cover).
  auto xlogy_ref = [](double x, double y) {
    if (std::isnan(y)) return kNaN;
    if (x == 0) return 0.0;
    return x * std::log(y);
  };
  OpInfo xlogy = binary(
      "xlogy", kAll, [xlogy_ref](double a, double b, DType) { return xlogy_ref(a, b); },
      [](const Tensor& a, const Tensor& b) { return anatomy::xlogy(a, b); },
      [](const Tensor& a, const Tensor& b) { a.xlogy_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { xlogy_out(o, a, b); }, Result::IntToFloat,
      {small(), range(0.25, 5, 1, 10)});
  xlogy.schemas = {"xlogy.Tensor", "xlogy_.Tensor", "xlogy.OutTensor"};
  ops.push_back(xlogy);

  OpInfo xlogy_self;
  xlogy_self.name = "xlogy_scalar_self";
  xlogy_self.family = OpFamily::Binary;
  xlogy_self.notes = "xlogy(2.5, tensor)";
  xlogy_self.schemas = {"xlogy.Tensor"};
  xlogy_self.dtypes = kAll;
  xlogy_self.differentiable = true;
  xlogy_self.samples = [](DType t) { return elementwise_samples(1, t, {range(0.25, 5, 1, 10)}); };
  xlogy_self.op = [](const SampleInput& s) { return std::vector<Tensor>{anatomy::xlogy(Scalar(2.5), s.tensors[0])}; };
  xlogy_self.reference = [xlogy_ref](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType t = is_floating(s.tensors[0].dtype()) ? s.tensors[0].dtype() : kDefaultFloat;
    return std::vector<RefTensor>{
        map_unary(in[0], t, [t, xlogy_ref](double y) { return xlogy_ref(round_to(2.5, t), round_to(y, t)); })};
  };
  ops.push_back(xlogy_self);

  // |self| with other's sign bit (-0.0 and a NaN's sign count); integers and bool promote to float.
  OpInfo copysign = binary(
      "copysign", kAll, [](double a, double b, DType) { return std::copysign(a, b); },
      [](const Tensor& a, const Tensor& b) { return anatomy::copysign(a, b); },
      [](const Tensor& a, const Tensor& b) { a.copysign_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { copysign_out(o, a, b); }, Result::IntToFloat);
  copysign.schemas = {"copysign.Tensor", "copysign_.Tensor", "copysign.out"};
  ops.push_back(copysign);
}

void add_min_max(std::vector<OpInfo>& ops) {
  // No in-place schema in PyTorch: maximum_ is the out= form into self.
  OpInfo maximum = binary(
      "maximum", kAll, [](double a, double b, DType) { return nan_max(a, b); },
      [](const Tensor& a, const Tensor& b) { return anatomy::maximum(a, b); },
      [](const Tensor& a, const Tensor& b) { a.maximum_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { maximum_out(o, a, b); });
  maximum.schemas = {"maximum", "maximum.out"};
  ops.push_back(with_bench(maximum));
  OpInfo minimum = binary(
      "minimum", kAll, [](double a, double b, DType) { return nan_min(a, b); },
      [](const Tensor& a, const Tensor& b) { return anatomy::minimum(a, b); },
      [](const Tensor& a, const Tensor& b) { a.minimum_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { minimum_out(o, a, b); });
  minimum.schemas = {"minimum", "minimum.out"};
  ops.push_back(minimum);

  // max and min of two tensors (aten::max.other, min.other): maximum's and minimum's rules under
  // the names of the reductions. No in-place schema: max_ is the out= form into self.
  for (const bool is_max : {true, false}) {
    const std::string op = is_max ? "max" : "min";
    OpInfo e = binary(
        op + "_binary", kAll, [is_max](double a, double b, DType) { return is_max ? nan_max(a, b) : nan_min(a, b); },
        [is_max](const Tensor& a, const Tensor& b) { return is_max ? anatomy::max(a, b) : anatomy::min(a, b); },
        [is_max](const Tensor& a, const Tensor& b) { is_max ? a.max_(b) : a.min_(b); },
        [is_max](const Tensor& o, const Tensor& a, const Tensor& b) { is_max ? max_out(o, a, b) : min_out(o, a, b); });
    e.notes = op + "(a, b): " + (is_max ? "maximum" : "minimum") + " of two tensors";
    e.schemas = {op + ".other", op + ".out"};
    e.error_inputs = [op] {
      return std::vector<ErrorInput>{{bad_sample("shapes that do not broadcast", {randn({2, 3}), randn({4})}),
                                      &typeid(ValueError),
                                      {op, "[2, 3]", "[4]"}}};
    };
    ops.push_back(e);
  }

  // clamp_min and clamp_max with a Tensor bound (a Scalar bound is a wrapped number): NaN in
  // either operand gives NaN.
  for (const bool is_min : {true, false}) {
    const std::string name = is_min ? "clamp_min" : "clamp_max";
    OpInfo e = binary(
        name, kNumeric, [is_min](double a, double b, DType) { return is_min ? nan_max(a, b) : nan_min(a, b); },
        [is_min](const Tensor& a, const Tensor& b) {
          return is_min ? anatomy::clamp_min(a, b) : anatomy::clamp_max(a, b);
        },
        [is_min](const Tensor& a, const Tensor& b) { is_min ? a.clamp_min_(b) : a.clamp_max_(b); },
        [is_min](const Tensor& o, const Tensor& a, const Tensor& b) {
          is_min ? clamp_min_out(o, a, b) : clamp_max_out(o, a, b);
        });
    e.schemas = {name + ".Tensor", name + "_.Tensor", name + ".Tensor_out"};
    with_errors(e,
                {{bad_sample("bool operands", {tensor({true}), tensor({false})}), &typeid(TypeError), {name, "bool"}}});
    ops.push_back(e);
  }
}

// threshold_backward(grad_output, self, threshold): 0 where self <= threshold, else grad_output.
// The kernels convert the threshold to the computation type, so an integer dtype compares with
// it truncated (0.5 becomes 0); the floats keep it (both thresholds here are exact in fp16).
OpInfo threshold_backward_entry(std::string name, double threshold) {
  auto ref = [threshold](double g, double x, DType t) {
    return x <= (is_floating(t) ? threshold : std::trunc(threshold)) ? 0.0 : g;
  };
  auto fn = [threshold](const Tensor& g, const Tensor& x) { return anatomy::threshold_backward(g, x, threshold); };
  OpInfo info = binary(std::move(name), kNumeric, ref, fn, nullptr, nullptr);
  info.schemas = {"threshold_backward"};
  info.error_inputs = [] {
    auto with_threshold = [](SampleInput s, double t) {
      s.scalars = {t};
      return s;
    };
    return std::vector<ErrorInput>{
        {bad_sample("shapes that do not broadcast", {randn({2, 3}), randn({4})}),
         &typeid(ValueError),
         {"threshold_backward", "[2, 3]", "[4]"}},
        {bad_sample("bool operands", {tensor({true, false}), tensor({true, true})}),
         &typeid(TypeError),
         {"threshold_backward", "bool"}},
        {with_threshold(
             bad_sample("a threshold beyond int8", {tensor({1, 2}).to(DType::Int8), tensor({1, 2}).to(DType::Int8)}),
             300),
         &typeid(ValueError),
         {"threshold_backward", "300", "int8"}},
    };
  };
  // The error samples carry their own threshold.
  info.op = [fn](const SampleInput& s) {
    if (!s.scalars.empty())
      return std::vector<Tensor>{anatomy::threshold_backward(s.tensors[0], s.tensors[1], s.scalars[0])};
    return std::vector<Tensor>{fn(s.tensors[0], s.tensors[1])};
  };
  return info;
}

void add_activation_gradients(std::vector<OpInfo>& ops) {
  OpInfo threshold = threshold_backward_entry("threshold_backward", 1.0);
  threshold.notes = "threshold 1; relu's gradient is threshold_backward(grad, result, 0)";
  ops.push_back(with_bench(threshold));
  OpInfo fractional = threshold_backward_entry("threshold_backward_frac", 0.5);
  fractional.notes = "threshold 0.5 (integers compare with it truncated to 0)";
  fractional.error_inputs = nullptr;  // threshold_backward's
  ops.push_back(fractional);
  // gelu_backward(grad_output, self, approximate): grad_output times gelu's derivative at self.
  for (const std::string approximate : {"none", "tanh"}) {
    auto ref = [approximate](double g, double x, DType) {
      if (approximate == "tanh") {
        constexpr double kSqrt2OverPi = 0.79788456080286535588, kKappa = 0.044715;
        const double t = std::tanh(kSqrt2OverPi * (x + kKappa * x * x * x));
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kSqrt2OverPi * (1 + 3 * kKappa * x * x));
      }
      return g * (0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) * 0.39894228040143267794);
    };
    auto fn = [approximate](const Tensor& g, const Tensor& x) { return anatomy::gelu_backward(g, x, approximate); };
    OpInfo gelu =
        binary(approximate == "none" ? "gelu_backward" : "gelu_backward_tanh", kFloating, ref, fn, nullptr, nullptr);
    gelu.schemas = {"gelu_backward"};
    gelu.differentiable = false;  // a backward of gelu's backward takes the operators' formula
    gelu.notes = "approximate='" + approximate + "'; gelu's gradient, one kernel";
    gelu.error_inputs = [] {
      return std::vector<ErrorInput>{
          {bad_sample("shapes that do not broadcast", {randn({2, 3}), randn({4})}),
           &typeid(ValueError),
           {"gelu_backward", "[2, 3]", "[4]"}},
          {bad_sample("integer operands", {tensor({1, 2}), tensor({1, 2})}), &typeid(TypeError), {"gelu_backward"}},
      };
    };
    ops.push_back(approximate == "none" ? with_bench(gelu) : gelu);
  }
}

#define ANATOMY_BOOL_ENTRY(op_name, schema_base, op_expr, ref_expr)                 \
  binary(                                                                           \
      #op_name, kAll, [](double a, double b, DType) -> double { return ref_expr; }, \
      [](const Tensor& a, const Tensor& b) { return op_expr; },                     \
      [](const Tensor& a, const Tensor& b) { a.op_name##_(b); },                    \
      [](const Tensor& o, const Tensor& a, const Tensor& b) { op_name##_out(o, a, b); }, Result::Bool)

void add_comparisons(std::vector<OpInfo>& ops) {
  std::vector<OpInfo> cmp = {
      ANATOMY_BOOL_ENTRY(eq, "eq", a == b, a == b), ANATOMY_BOOL_ENTRY(ne, "ne", a != b, a != b),
      ANATOMY_BOOL_ENTRY(lt, "lt", a < b, a < b),   ANATOMY_BOOL_ENTRY(le, "le", a <= b, a <= b),
      ANATOMY_BOOL_ENTRY(gt, "gt", a > b, a > b),   ANATOMY_BOOL_ENTRY(ge, "ge", a >= b, a >= b),
  };
  for (OpInfo& e : cmp) {
    e.schemas = {e.name + ".Tensor", e.name + "_.Tensor", e.name + ".Tensor_out"};
    if (e.name == "eq") with_bench(e);
    ops.push_back(e);
  }
  std::vector<OpInfo> logical = {
      ANATOMY_BOOL_ENTRY(logical_and, "logical_and", logical_and(a, b), (a != 0) && (b != 0)),
      ANATOMY_BOOL_ENTRY(logical_or, "logical_or", logical_or(a, b), (a != 0) || (b != 0)),
      ANATOMY_BOOL_ENTRY(logical_xor, "logical_xor", logical_xor(a, b), (a != 0) != (b != 0)),
  };
  for (OpInfo& e : logical) {
    e.schemas = {e.name, e.name + "_", e.name + ".out"};
    ops.push_back(e);
  }
}
#undef ANATOMY_BOOL_ENTRY

void add_bitwise(std::vector<OpInfo>& ops) {
  struct Bitwise {
    const char* name;
    Fn2 fn;
    Inplace2 inplace;
    Out2 out;
    std::function<int64_t(int64_t, int64_t)> f;
  };
  const std::vector<Bitwise> list = {
      {"bitwise_and", [](const Tensor& a, const Tensor& b) { return a & b; },
       [](const Tensor& a, const Tensor& b) { a.bitwise_and_(b); },
       [](const Tensor& o, const Tensor& a, const Tensor& b) { bitwise_and_out(o, a, b); },
       [](int64_t a, int64_t b) { return a & b; }},
      {"bitwise_or", [](const Tensor& a, const Tensor& b) { return a | b; },
       [](const Tensor& a, const Tensor& b) { a.bitwise_or_(b); },
       [](const Tensor& o, const Tensor& a, const Tensor& b) { bitwise_or_out(o, a, b); },
       [](int64_t a, int64_t b) { return a | b; }},
      {"bitwise_xor", [](const Tensor& a, const Tensor& b) { return a ^ b; },
       [](const Tensor& a, const Tensor& b) { a.bitwise_xor_(b); },
       [](const Tensor& o, const Tensor& a, const Tensor& b) { bitwise_xor_out(o, a, b); },
       [](int64_t a, int64_t b) { return a ^ b; }},
  };
  for (const Bitwise& b : list) {
    auto f = b.f;
    OpInfo e = binary(
        b.name, kIntegersAndBool,
        [f](double x, double y, DType) {
          return static_cast<double>(f(static_cast<int64_t>(x), static_cast<int64_t>(y)));
        },
        b.fn, b.inplace, b.out, Result::Promoted, {small()}, /*mixed=*/false);
    e.differentiable = false;
    e.schemas = {e.name + ".Tensor", e.name + "_.Tensor", e.name + ".Tensor_out"};
    with_errors(
        e,
        {{bad_sample("floating operands", {randn({3}), randn({3})}), &typeid(TypeError), {b.name, "fp32"}},
         {bad_sample("an integer and a float", {tensor({1, 2}), tensor({1.5, 2.5})}), &typeid(TypeError), {b.name}}});
    ops.push_back(e);
  }

  // Shifts by the width or more (and by negative amounts): left gives 0, right the sign fill.
  for (const bool left : {true, false}) {
    const std::string name = left ? "bitwise_left_shift" : "bitwise_right_shift";
    OpInfo e = binary(
        name, kIntegers,
        [left](double x, double y, DType t) {
          const int64_t a = static_cast<int64_t>(x), s = static_cast<int64_t>(y);
          const bool out_of_range = s < 0 || s >= bits_of(t);
          if (left) return out_of_range ? 0.0 : wrap_int(static_cast<uint64_t>(a) << s, t);
          if (out_of_range) return a < 0 ? -1.0 : 0.0;
          return static_cast<double>(a >> s);
        },
        [left](const Tensor& a, const Tensor& b) { return left ? a << b : a >> b; },
        [left](const Tensor& a, const Tensor& b) { left ? a.bitwise_left_shift_(b) : a.bitwise_right_shift_(b); },
        [left](const Tensor& o, const Tensor& a, const Tensor& b) {
          left ? bitwise_left_shift_out(o, a, b) : bitwise_right_shift_out(o, a, b);
        },
        Result::Promoted, {range(-4, 4, -100, 100), range(0, 4, 0, 10)}, /*mixed=*/false);
    e.differentiable = false;
    e.schemas = {name + ".Tensor", name + "_.Tensor", name + ".Tensor_out"};
    with_errors(e, {{bad_sample("bool operands", {tensor({true}), tensor({true})}), &typeid(TypeError), {name, "bool"}},
                    {bad_sample("floating operands", {randn({3}), tensor({1, 2, 3})}), &typeid(TypeError), {name}}});
    ops.push_back(e);
  }
}

// isclose, allclose and equal: two tensors of one dtype (the samples with a wrapped number or
// mixed dtypes are left out). Where the shapes agree, about half the elements of other are copies
// of self's, so both answers occur; scalars are {rtol, atol}, ints {equal_nan}, alternating
// between the defaults and looser tolerances.
std::vector<SampleInput> closeness_samples(DType t) {
  std::vector<SampleInput> out;
  size_t i = 0;
  for (SampleInput s : elementwise_samples(2, t, {small()}, /*mixed=*/false)) {
    if (s.tensors[0].dtype() != s.tensors[1].dtype()) continue;
    // isclose takes two tensors, never a Python number: no wrapped-number sample (on CUDA it
    // would be a CPU tensor next to a device one, which the closeness ops refuse).
    if (s.tensors[1].impl()->is_wrapped_number()) continue;
    if (s.tensors[0].sizes() == s.tensors[1].sizes() && s.tensors[0].numel() > 0) {
      const Tensor copy_self =
          random_tensor(std::vector<int64_t>(s.tensors[0].sizes().begin(), s.tensors[0].sizes().end()), DType::Bool);
      s.tensors[1] = where(copy_self, s.tensors[0], s.tensors[1]);
    }
    s.scalars = i % 2 == 0 ? std::vector<double>{1e-05, 1e-08} : std::vector<double>{0.1, 0.5};
    s.ints = {static_cast<int64_t>(i % 3 == 0)};
    out.push_back(s);
    ++i;
  }
  return out;
}
// A floating dtype computes |a - b| and atol + rtol * |b| in that dtype, each step rounded (the
// boundary of an fp16 comparison is fp16's, rtol and atol too); integers and bool in fp64.
bool close_ref(double a, double b, double rtol, double atol, bool equal_nan, DType t) {
  if (a == b) return true;
  if (std::isnan(a) && std::isnan(b)) return equal_nan;
  const DType c = is_floating(t) ? t : DType::Float64;
  const double diff = round_to(std::fabs(a - b), c);
  // The tolerances reach the kernels as wrapped numbers cast to the dtype.
  const double r = round_to(rtol, c), t_abs = round_to(atol, c);
  return std::isfinite(diff) && diff <= round_to(t_abs + std::fabs(round_to(r * b, c)), c);
}

void add_closeness(std::vector<OpInfo>& ops) {
  OpInfo isclose;
  isclose.name = "isclose";
  isclose.family = OpFamily::Binary;
  isclose.notes = "rtol, atol: the defaults or 0.1, 0.5; equal_nan on every third sample";
  isclose.schemas = {"isclose"};
  isclose.dtypes = kAll;
  isclose.samples = closeness_samples;
  isclose.op = [](const SampleInput& s) {
    return std::vector<Tensor>{
        anatomy::isclose(s.tensors[0], s.tensors[1], s.scalars[0], s.scalars[1], s.ints[0] != 0)};
  };
  isclose.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{map_binary(in[0], in[1], DType::Bool, [&](double a, double b) {
      return close_ref(a, b, s.scalars[0], s.scalars[1], s.ints[0] != 0, s.tensors[0].dtype()) ? 1.0 : 0.0;
    })};
  };
  auto with_tolerances = [](SampleInput s, double rtol, double atol) {
    s.scalars = {rtol, atol};
    s.ints = {0};
    return s;
  };
  isclose.error_inputs = [with_tolerances] {
    return std::vector<ErrorInput>{
        {with_tolerances(bad_sample("two dtypes", {randn({2}), tensor({1, 2})}), 1e-5, 1e-8),
         &typeid(TypeError),
         {"isclose", "fp32", "int64"}},
        {with_tolerances(bad_sample("a negative rtol", {randn({2}), randn({2})}), -1, 1e-8),
         &typeid(ValueError),
         {"isclose", "rtol", "-1"}},
        {with_tolerances(bad_sample("a negative atol", {randn({2}), randn({2})}), 1e-5, -0.5),
         &typeid(ValueError),
         {"isclose", "atol", "-0.5"}},
        {with_tolerances(bad_sample("shapes that do not broadcast", {randn({2, 3}), randn({4})}), 1e-5, 1e-8),
         &typeid(ValueError),
         {"isclose", "[2, 3]", "[4]"}}};
  };
  ops.push_back(isclose);

  // allclose and equal return a bool; the entries wrap it in a 0-dim bool tensor on the inputs'
  // device, as every entry's results are.
  OpInfo allclose = isclose;
  allclose.name = "allclose";
  allclose.notes = "isclose everywhere, a bool (here as a 0-dim tensor)";
  allclose.schemas = {"allclose"};
  allclose.op = [](const SampleInput& s) {
    return std::vector<Tensor>{
        scalar_tensor(anatomy::allclose(s.tensors[0], s.tensors[1], s.scalars[0], s.scalars[1], s.ints[0] != 0),
                      DType::Bool)
            .to(s.tensors[0].device())};
  };
  allclose.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor each = map_binary(in[0], in[1], DType::Bool, [&](double a, double b) {
      return close_ref(a, b, s.scalars[0], s.scalars[1], s.ints[0] != 0, s.tensors[0].dtype()) ? 1.0 : 0.0;
    });
    bool all = true;
    for (double v : each.data) all = all && v != 0;
    return std::vector<RefTensor>{RefTensor({}, DType::Bool, all ? 1.0 : 0.0)};
  };
  allclose.error_inputs = [with_tolerances] {
    return std::vector<ErrorInput>{{with_tolerances(bad_sample("two dtypes", {randn({2}), tensor({1, 2})}), 1e-5, 1e-8),
                                    &typeid(TypeError),
                                    {"allclose", "fp32", "int64"}}};
  };
  ops.push_back(allclose);

  OpInfo equal = isclose;
  equal.name = "equal";
  equal.notes = "the same sizes and values (NaN is not equal to NaN), a bool (here as a 0-dim tensor)";
  equal.schemas = {"equal"};
  equal.op = [](const SampleInput& s) {
    return std::vector<Tensor>{
        scalar_tensor(anatomy::equal(s.tensors[0], s.tensors[1]), DType::Bool).to(s.tensors[0].device())};
  };
  equal.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    bool same = in[0].shape == in[1].shape;
    for (size_t i = 0; same && i < in[0].data.size(); ++i) same = in[0].data[i] == in[1].data[i];
    return std::vector<RefTensor>{RefTensor({}, DType::Bool, same ? 1.0 : 0.0)};
  };
  equal.error_inputs = nullptr;  // any two tensors on one device have an answer
  ops.push_back(equal);

  // isin(elements, test_elements): the test elements are the second tensor of the standard
  // samples (small integer ranges, so hits are common; floats get some of the elements' values
  // copied in); ints {assume_unique, invert}. The reference sorts the test values and searches
  // each element, in fp64 after promotion; NaN is found nowhere.
  OpInfo isin;
  isin.name = "isin";
  isin.family = OpFamily::Binary;
  isin.notes = "Tensor test_elements; invert and assume_unique on some samples";
  isin.schemas = {"isin.Tensor_Tensor"};
  isin.dtypes = kAll;
  isin.samples = [](DType t) {
    std::vector<SampleInput> out;
    size_t i = 0;
    for (SampleInput s : elementwise_samples(2, t, {small()})) {
      if (s.tensors[1].impl()->is_wrapped_number()) continue;  // the Scalar forms have entries of their own
      if (is_floating(t) && s.tensors[0].numel() > 0 && s.tensors[1].numel() > 0) {
        // Some of the elements' values among the test elements, so that floats hit too.
        const Tensor some = s.tensors[0].reshape({-1}).slice(0, 0, std::min<int64_t>(s.tensors[0].numel(), 5));
        s.tensors[1] = cat({s.tensors[1].reshape({-1}), some.to(s.tensors[1].dtype())});
      }
      s.ints = {static_cast<int64_t>(i % 3 == 1), static_cast<int64_t>(i % 2 == 1)};
      out.push_back(s);
      ++i;
    }
    return out;
  };
  isin.op = [](const SampleInput& s) {
    return std::vector<Tensor>{anatomy::isin(s.tensors[0], s.tensors[1], s.ints[0] != 0, s.ints[1] != 0)};
  };
  auto isin_ref = [](const RefTensor& elements, std::vector<double> tests, DType t, bool invert) {
    for (double& v : tests) v = round_to(v, t);
    std::sort(tests.begin(), tests.end());
    return map_unary(elements, DType::Bool, [&](double x) {
      const double v = round_to(x, t);
      const bool found = !std::isnan(v) && std::binary_search(tests.begin(), tests.end(), v);
      return found != invert ? 1.0 : 0.0;
    });
  };
  isin.reference = [isin_ref](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{isin_ref(in[0], in[1].data, promoted_dtype(s.tensors), s.ints[1] != 0)};
  };
  // Its one bad input, tensors on two devices, needs a meta tensor the table cannot read back
  // (tests/core/test_binary_functions.cpp checks it).
  ops.push_back(isin);

  // isin with one Scalar: the tensor against a Scalar test element (eq, or ne when inverted), and
  // a Scalar element against a tensor of test elements.
  for (const bool scalar_self : {false, true}) {
    OpInfo e;
    e.name = scalar_self ? "isin_scalar_element" : "isin_scalar_test";
    e.family = OpFamily::Binary;
    e.notes = scalar_self ? "isin(3, test_elements)" : "isin(elements, 3)";
    e.schemas = {scalar_self ? "isin.Scalar_Tensor" : "isin.Tensor_Scalar"};
    e.dtypes = kNumeric;
    e.samples = [](DType t) {
      std::vector<SampleInput> out = elementwise_samples(1, t, {small()});
      for (size_t i = 0; i < out.size(); ++i) out[i].ints = {0, static_cast<int64_t>(i % 2)};
      return out;
    };
    e.op = [scalar_self](const SampleInput& s) {
      const bool invert = s.ints[1] != 0;
      return std::vector<Tensor>{scalar_self ? anatomy::isin(Scalar(3), s.tensors[0], false, invert)
                                             : anatomy::isin(s.tensors[0], Scalar(3), false, invert)};
    };
    e.reference = [scalar_self, isin_ref](const std::vector<RefTensor>& in, const SampleInput& s) {
      const DType t = s.tensors[0].dtype();  // an integral Scalar takes the tensor's dtype
      const bool invert = s.ints[1] != 0;
      if (!scalar_self) return std::vector<RefTensor>{isin_ref(in[0], {3.0}, t, invert)};
      return std::vector<RefTensor>{isin_ref(RefTensor({}, DType::Float64, 3.0), in[0].data, t, invert)};
    };
    ops.push_back(e);
  }
}

// The condition of where: a bool tensor of the sample's first tensor's shape and strides.
Tensor bool_like(const Tensor& t) {
  Tensor c = random_tensor(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), DType::Bool);
  if (t.is_non_overlapping_and_dense() && t.numel() > 0) {
    Tensor strided = empty_strided(t.sizes(), t.strides(), TensorOptions().dtype(DType::Bool));
    strided.copy_(c);
    return strided;
  }
  return c;
}

void add_ternary_entries(std::vector<OpInfo>& ops) {
  OpInfo where;
  where.name = "where";
  where.family = OpFamily::Binary;
  where.schemas = {"where.self", "where.self_out"};
  where.dtypes = kAll;
  where.differentiable = true;
  // where(condition, self, other): the standard 3-input samples with a bool first input.
  where.samples = [](DType t) {
    std::vector<SampleInput> samples = elementwise_samples(3, t, {small()});
    for (SampleInput& s : samples) {
      if (s.tensors[0].impl()->is_wrapped_number()) continue;
      const bool expanded = s.label == "expanded";
      s.tensors[0] =
          expanded ? bool_like(s.tensors[0].select(0, 0)).expand(s.tensors[0].sizes()) : bool_like(s.tensors[0]);
    }
    return samples;
  };
  where.op = [](const SampleInput& s) {
    return std::vector<Tensor>{anatomy::where(s.tensors[0], s.tensors[1], s.tensors[2])};
  };
  where.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType t = promoted_dtype({s.tensors[1], s.tensors[2]});
    return std::vector<RefTensor>{
        map_ternary(in[0], in[1], in[2], t, [t](double c, double a, double b) { return round_to(c != 0 ? a : b, t); })};
  };
  where.out = [](const Tensor& o, const SampleInput& s) { where_out(o, s.tensors[0], s.tensors[1], s.tensors[2]); };
  where.bench_input = [](int64_t n) {
    SampleInput s;
    s.tensors = {randn({n}) > 0.0, randn({n}), randn({n})};
    return s;
  };
  where.error_inputs = [] {
    return std::vector<ErrorInput>{
        {bad_sample("a float condition", {randn({3}), randn({3}), randn({3})}), &typeid(TypeError), {"where", "bool"}},
        {bad_sample("shapes that do not broadcast", {tensor({true, false}), randn({3}), randn({3})}),
         &typeid(ValueError),
         {"where", "[2]", "[3]"}}};
  };
  ops.push_back(where);

  // lerp, PyTorch's two-sided formula (exact at weight 0 and 1; the same inf/NaN results).
  auto lerp_ref = [](double a, double b, double w) {
    return std::fabs(w) < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w);
  };
  auto lerp_tol = [](DType t) {
    Tolerance tol = default_tolerance(t);
    if (t == DType::Float32) tol.atol = 1e-5;  // cancellation in end - self
    return tol;
  };
  OpInfo lerp_s;
  lerp_s.name = "lerp_scalar";
  lerp_s.family = OpFamily::Binary;
  lerp_s.notes = "lerp with a Scalar weight (0.3, or 0.8 on every other sample)";
  lerp_s.schemas = {"lerp.Scalar", "lerp_.Scalar", "lerp.Scalar_out"};
  lerp_s.dtypes = kFloating;
  lerp_s.differentiable = true;
  lerp_s.tolerance = lerp_tol;
  lerp_s.samples = [](DType t) {
    std::vector<SampleInput> samples = elementwise_samples(2, t, {Domain{}}, /*mixed=*/false);
    for (size_t i = 0; i < samples.size(); ++i) samples[i].scalars = {i % 2 == 0 ? 0.3 : 0.8};
    return samples;
  };
  lerp_s.op = [](const SampleInput& s) {
    return std::vector<Tensor>{anatomy::lerp(s.tensors[0], s.tensors[1], s.scalars[0])};
  };
  lerp_s.reference = [lerp_ref](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType t = promoted_dtype(s.tensors);
    const double w = s.scalars[0];
    return std::vector<RefTensor>{map_binary(
        in[0], in[1], t, [&](double a, double b) { return lerp_ref(round_to(a, t), round_to(b, t), round_to(w, t)); })};
  };
  lerp_s.inplace = [](const SampleInput& s) { lerp_(s.tensors[0], s.tensors[1], s.scalars[0]); };
  lerp_s.out = [](const Tensor& o, const SampleInput& s) { lerp_out(o, s.tensors[0], s.tensors[1], s.scalars[0]); };
  lerp_s.error_inputs = [] {
    SampleInput s = bad_sample("integer inputs", {tensor({1, 2}), tensor({3, 4})});
    s.scalars = {0.5};
    return std::vector<ErrorInput>{{s, &typeid(TypeError), {"lerp", "floating", "int64"}}};
  };
  ops.push_back(lerp_s);

  OpInfo lerp_t;
  lerp_t.name = "lerp_tensor";
  lerp_t.family = OpFamily::Binary;
  lerp_t.notes = "lerp with a Tensor weight";
  lerp_t.schemas = {"lerp.Tensor", "lerp_.Tensor", "lerp.Tensor_out"};
  lerp_t.dtypes = kFloating;
  lerp_t.differentiable = true;
  lerp_t.tolerance = lerp_tol;
  lerp_t.samples = [](DType t) {
    return elementwise_samples(3, t, {Domain{}, Domain{}, range(-0.5, 1.5, 0, 2)}, /*mixed=*/false);
  };
  lerp_t.op = [](const SampleInput& s) {
    return std::vector<Tensor>{anatomy::lerp(s.tensors[0], s.tensors[1], s.tensors[2])};
  };
  lerp_t.reference = [lerp_ref](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType t = promoted_dtype(s.tensors);
    return std::vector<RefTensor>{map_ternary(in[0], in[1], in[2], t, [&](double a, double b, double w) {
      return lerp_ref(round_to(a, t), round_to(b, t), round_to(w, t));
    })};
  };
  lerp_t.inplace = [](const SampleInput& s) { lerp_(s.tensors[0], s.tensors[1], s.tensors[2]); };
  lerp_t.out = [](const Tensor& o, const SampleInput& s) { lerp_out(o, s.tensors[0], s.tensors[1], s.tensors[2]); };
  ops.push_back(lerp_t);

  // clamp with Scalar bounds: sample.ints says which bounds are given, sample.scalars their values.
  auto clamp_ref = [](double x, double lo, double hi) {
    if (std::isnan(x) || std::isnan(lo) || std::isnan(hi)) return kNaN;
    return std::min(std::max(x, lo), hi);
  };
  auto bound = [](const SampleInput& s, int i) -> std::optional<Scalar> {
    if (!s.ints[i]) return std::nullopt;
    const double v = s.scalars[i];
    if (v == std::floor(v)) return Scalar(static_cast<int64_t>(v));
    return Scalar(v);
  };
  OpInfo clamp;
  clamp.name = "clamp";
  clamp.family = OpFamily::Binary;
  clamp.notes = "Scalar bounds: both, min only, max only, min > max, a float bound on integers";
  clamp.schemas = {"clamp", "clamp_", "clamp.out"};
  clamp.dtypes = kNumeric;
  clamp.differentiable = true;
  clamp.samples = [](DType t) {
    std::vector<SampleInput> out;
    const std::vector<std::pair<std::vector<int64_t>, std::vector<double>>> bounds = {
        {{1, 1}, {-2, 3}}, {{1, 0}, {-1, 0}}, {{0, 1}, {0, 2}}, {{1, 1}, {3, -1}}, {{1, 1}, {-1.5, 2.5}}};
    std::vector<SampleInput> base = elementwise_samples(1, t, {small()});
    for (size_t i = 0; i < base.size(); ++i) {
      for (const auto& [given, values] : bounds) {
        SampleInput s = base[i];
        s.ints = given;
        s.scalars = values;
        out.push_back(s);
      }
    }
    return out;
  };
  clamp.op = [bound](const SampleInput& s) {
    return std::vector<Tensor>{anatomy::clamp(s.tensors[0], bound(s, 0), bound(s, 1))};
  };
  clamp.reference = [bound, clamp_ref](const std::vector<RefTensor>& in, const SampleInput& s) {
    std::vector<Tensor> operands = {s.tensors[0]};
    for (int i = 0; i < 2; ++i) {
      if (auto b = bound(s, i)) {
        Tensor w = scalar_tensor(*b, b->dtype());
        w.impl()->set_wrapped_number(true);
        operands.push_back(w);
      }
    }
    const DType t = promoted_dtype(operands);
    const double inf = std::numeric_limits<double>::infinity();
    const double lo = s.ints[0] ? round_to(s.scalars[0], t) : -inf, hi = s.ints[1] ? round_to(s.scalars[1], t) : inf;
    return std::vector<RefTensor>{map_unary(in[0], t, [&](double x) { return clamp_ref(round_to(x, t), lo, hi); })};
  };
  clamp.inplace = [bound](const SampleInput& s) { s.tensors[0].clamp_(bound(s, 0), bound(s, 1)); };
  clamp.out = [bound](const Tensor& o, const SampleInput& s) { clamp_out(o, s.tensors[0], bound(s, 0), bound(s, 1)); };
  clamp.error_inputs = [] {
    SampleInput none = bad_sample("no bound", {randn({3})});
    none.ints = {0, 0};
    none.scalars = {0, 0};
    return std::vector<ErrorInput>{{none, &typeid(ValueError), {"clamp", "min", "max"}}};
  };
  clamp.bench_input = [](int64_t n) {
    SampleInput s;
    s.tensors = {randn({n})};
    s.ints = {1, 1};
    s.scalars = {-0.5, 0.5};
    return s;
  };
  ops.push_back(clamp);

  // clamp with Tensor bounds: both (mostly min <= max, some min > max), or one of them absent.
  OpInfo clamp_t;
  clamp_t.name = "clamp_tensor";
  clamp_t.family = OpFamily::Binary;
  clamp_t.notes = "Tensor bounds, broadcast with self; one may be None";
  clamp_t.schemas = {"clamp.Tensor"};
  clamp_t.dtypes = kNumeric;
  clamp_t.differentiable = true;
  clamp_t.samples = [](DType t) {
    std::vector<SampleInput> out = elementwise_samples(3, t, {small(), range(-3, 1, -5, 2), range(-1, 3, -2, 5)});
    std::vector<SampleInput> one_sided = elementwise_samples(2, t, {small(), range(-2, 2, -3, 3)});
    for (size_t i = 0; i < one_sided.size(); ++i) {
      SampleInput s = one_sided[i];
      s.label += i % 2 == 0 ? " (min only)" : " (max only)";
      s.tensors.insert(i % 2 == 0 ? s.tensors.end() : s.tensors.begin() + 1, Tensor());
      out.push_back(s);
    }
    return out;
  };
  auto opt = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
  clamp_t.op = [opt](const SampleInput& s) {
    return std::vector<Tensor>{anatomy::clamp(s.tensors[0], opt(s.tensors[1]), opt(s.tensors[2]))};
  };
  clamp_t.reference = [clamp_ref](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType t = promoted_dtype(s.tensors);
    const double inf = std::numeric_limits<double>::infinity();
    auto given = [&](const RefTensor& r, double fill) { return r.defined ? r : RefTensor({}, DType::Float64, fill); };
    return std::vector<RefTensor>{
        map_ternary(in[0], given(in[1], -inf), given(in[2], inf), t, [&](double x, double lo, double hi) {
          auto r = [t](double v) { return std::isinf(v) ? v : round_to(v, t); };  // an absent bound stays infinite
          return clamp_ref(r(x), r(lo), r(hi));
        })};
  };
  ops.push_back(clamp_t);

  // addcmul and addcdiv: self + value * tensor1 (* or /) tensor2, with value 2 or -1 (integral,
  // so integer dtypes take it). The composite rounds the product (quotient) to the dtype of
  // tensor1 and tensor2 before adding, and so does the reference.
  for (const bool divide : {false, true}) {
    const std::string name = divide ? "addcdiv" : "addcmul";
    OpInfo e;
    e.name = name;
    e.family = OpFamily::Binary;
    e.notes = std::string("value 2 or -1; composite of ") + (divide ? "div" : "mul") + " and add";
    e.schemas = {name, name + "_", name + ".out"};
    e.dtypes = divide ? kFloating : kNumeric;
    e.differentiable = true;
    e.samples = [divide](DType t) {
      std::vector<SampleInput> samples =
          elementwise_samples(3, t, {small(), small(), divide ? range(0.5, 2, 1, 3) : small()}, /*mixed=*/false);
      for (size_t i = 0; i < samples.size(); ++i) samples[i].scalars = {i % 2 == 0 ? 2.0 : -1.0};
      return samples;
    };
    auto value = [](const SampleInput& s) {
      const double v = s.scalars.empty() ? 1.0 : s.scalars[0];  // the bad inputs take the default
      return v == std::floor(v) ? Scalar(static_cast<int64_t>(v)) : Scalar(v);
    };
    e.op = [divide, value](const SampleInput& s) {
      const Tensor& a = s.tensors[0];
      return std::vector<Tensor>{divide ? anatomy::addcdiv(a, s.tensors[1], s.tensors[2], value(s))
                                        : anatomy::addcmul(a, s.tensors[1], s.tensors[2], value(s))};
    };
    e.reference = [divide](const std::vector<RefTensor>& in, const SampleInput& s) {
      const DType t = promoted_dtype(s.tensors);
      const DType inner = promoted_dtype({s.tensors[1], s.tensors[2]});
      const double v = s.scalars[0];
      return std::vector<RefTensor>{map_ternary(in[0], in[1], in[2], t, [&](double a, double b, double c) {
        const double x = round_to(b, inner), y = round_to(c, inner);
        return round_to(round_to(a, t) + v * round_to(divide ? x / y : x * y, inner), t);
      })};
    };
    e.inplace = [divide, value](const SampleInput& s) {
      divide ? addcdiv_(s.tensors[0], s.tensors[1], s.tensors[2], value(s))
             : addcmul_(s.tensors[0], s.tensors[1], s.tensors[2], value(s));
    };
    e.out = [divide, value](const Tensor& o, const SampleInput& s) {
      divide ? addcdiv_out(o, s.tensors[0], s.tensors[1], s.tensors[2], value(s))
             : addcmul_out(o, s.tensors[0], s.tensors[1], s.tensors[2], value(s));
    };
    e.error_inputs = [name, divide] {
      std::vector<ErrorInput> errors = {
          {bad_sample("shapes that do not broadcast", {randn({2, 3}), randn({4}), randn({4})}),
           &typeid(ValueError),
           {name, "[2, 3]", "[4]"}}};
      if (divide) {
        errors.push_back({bad_sample("integer tensor1 and tensor2", {randn({2}), tensor({1, 2}), tensor({3, 4})}),
                          &typeid(TypeError),
                          {"addcdiv", "int64"}});
      } else {
        SampleInput fractional =
            bad_sample("a fractional value on integers", {tensor({1, 2}), tensor({1, 2}), tensor({3, 4})});
        fractional.scalars = {0.5};
        errors.push_back({fractional, &typeid(TypeError), {"addcmul", "value", "0.5"}});
        errors.push_back({bad_sample("bool operands", {tensor({true}), tensor({true}), tensor({false})}),
                          &typeid(TypeError),
                          {"addcmul", "bool"}});
      }
      return errors;
    };
    ops.push_back(e);
  }
}

}  // namespace

ANATOMY_REGISTER_OPS(binary) {
  std::vector<OpInfo> ops;
  add_arithmetic(ops);
  add_min_max(ops);
  add_comparisons(ops);
  add_bitwise(ops);
  add_ternary_entries(ops);
  add_closeness(ops);
  add_activation_gradients(ops);
  return ops;
}

}  // namespace anatomy::testing
