// Op-table entries: element-wise binary and ternary operators.
#include <cmath>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kAll = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                                 DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kNumeric = {DType::UInt8,   DType::Int8,     DType::Int32,   DType::Int64,
                                     DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// Values that keep products and sums of 8-bit integers in range (wrapping is not under test).
Domain small() {
  Domain d;
  d.int_low = -9;
  d.int_high = 10;
  return d;
}

// A binary arithmetic entry: result dtype by promotion (integers to the default float when
// `int_to_float`), the reference applying f to the promoted values.
OpInfo arithmetic(std::string name, std::vector<DType> dtypes, std::function<double(double, double)> f,
                  std::function<Tensor(const Tensor&, const Tensor&)> fn,
                  std::function<void(const Tensor&, const Tensor&)> inplace,
                  std::function<void(const Tensor&, const Tensor&, const Tensor&)> out, bool int_to_float = false,
                  Domain other_domain = small()) {
  OpInfo info;
  info.name = name;
  info.family = OpFamily::Binary;
  info.schemas = {name + ".Tensor", name + "_.Tensor", name + ".out"};
  info.dtypes = std::move(dtypes);
  info.differentiable = true;
  info.samples = [other_domain](DType t) { return elementwise_samples(2, t, {small(), other_domain}); };
  info.op = [fn](const SampleInput& s) { return std::vector<Tensor>{fn(s.tensors[0], s.tensors[1])}; };
  info.reference = [f, int_to_float](const std::vector<RefTensor>& in, const SampleInput& s) {
    DType t = promoted_dtype(s.tensors);
    if (int_to_float && !is_floating(t)) t = kDefaultFloat;
    // The kernel computes in the promoted dtype: inputs are first rounded to it.
    auto cast = [t](double v) { return round_to(v, t); };
    return std::vector<RefTensor>{map_binary(in[0], in[1], t, [&](double a, double b) { return f(cast(a), cast(b)); })};
  };
  info.inplace = [inplace](const SampleInput& s) { inplace(s.tensors[0], s.tensors[1]); };
  info.out = [out](const Tensor& o, const SampleInput& s) { out(o, s.tensors[0], s.tensors[1]); };
  info.bench_input = [](int64_t n) {
    SampleInput s;
    s.tensors = {randn({n}), randn({n})};
    return s;
  };
  info.error_inputs = [fn_name = name] {
    std::vector<ErrorInput> bad;
    SampleInput shapes;
    shapes.label = "shapes that do not broadcast";
    shapes.tensors = {randn({2, 3}), randn({4})};
    bad.push_back({shapes, &typeid(ValueError), {fn_name, "[2, 3]", "[4]"}});
    return bad;
  };
  return info;
}

}  // namespace

ANATOMY_REGISTER_OPS(binary) {
  std::vector<OpInfo> ops;
  // bool + bool is logical or and bool * bool logical and: the reference's rounding to bool agrees.
  ops.push_back(arithmetic(
      "add", kAll, [](double a, double b) { return a + b; }, [](const Tensor& a, const Tensor& b) { return a + b; },
      [](const Tensor& a, const Tensor& b) { a.add_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { add_out(o, a, b); }));

  OpInfo add_alpha = arithmetic(
      "add_alpha", kNumeric, [](double a, double b) { return a + 3 * b; },
      [](const Tensor& a, const Tensor& b) { return anatomy::add(a, b, 3); },
      [](const Tensor& a, const Tensor& b) { a.add_(b, 3); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { add_out(o, a, b, 3); });
  add_alpha.notes = "add with alpha = 3";
  add_alpha.schemas = {"add.Tensor", "add_.Tensor", "add.out"};
  add_alpha.bench_input = nullptr;
  add_alpha.error_inputs = nullptr;  // add's
  ops.push_back(add_alpha);

  OpInfo sub = arithmetic(
      "sub", kNumeric, [](double a, double b) { return a - b; }, [](const Tensor& a, const Tensor& b) { return a - b; },
      [](const Tensor& a, const Tensor& b) { a.sub_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { sub_out(o, a, b); });
  sub.error_inputs = [] {
    std::vector<ErrorInput> bad;
    SampleInput s;
    s.label = "bool operands";
    s.tensors = {tensor({true, false}), tensor({true, true})};
    bad.push_back({s, &typeid(TypeError), {"sub", "bool"}});
    return bad;
  };
  ops.push_back(sub);

  ops.push_back(arithmetic(
      "mul", kAll, [](double a, double b) { return a * b; }, [](const Tensor& a, const Tensor& b) { return a * b; },
      [](const Tensor& a, const Tensor& b) { a.mul_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { mul_out(o, a, b); }));

  Domain divisor = small();
  divisor.exclude_zero = true;
  ops.push_back(arithmetic(
      "div", kAll, [](double a, double b) { return a / b; }, [](const Tensor& a, const Tensor& b) { return a / b; },
      [](const Tensor& a, const Tensor& b) { a.div_(b); },
      [](const Tensor& o, const Tensor& a, const Tensor& b) { div_out(o, a, b); }, /*int_to_float=*/true, divisor));
  return ops;
}

}  // namespace anatomy::testing
