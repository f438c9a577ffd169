// Op-table entries: reductions (sum, mean, prod, max/min and their arg and dim forms, var/std,
// norm, logsumexp, any/all, count_nonzero) and the statistics over them (var_mean, std_mean,
// nansum, nanmean, aminmax, median, kthvalue, mode).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kAll = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                                 DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kFloat = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kNumeric = {DType::UInt8,   DType::Int8,     DType::Int32,   DType::Int64,
                                     DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

SampleInput sample(std::string label, Tensor t, std::vector<int64_t> dims, bool keepdim = false) {
  SampleInput s;
  s.label = std::move(label);
  s.tensors = {std::move(t)};
  s.dims = std::move(dims);
  s.keepdim = keepdim;
  return s;
}
// A sample with dim=None: every dim.
SampleInput sample_every_dim(std::string label, Tensor t, bool keepdim = false) {
  SampleInput s = sample(std::move(label), std::move(t), {}, keepdim);
  s.every_dim = true;
  return s;
}
// max, min, argmax and argmin samples: an empty list stands for the whole tensor.
OptionalIntArrayRef one_dim_or_every_dim(const SampleInput& s) {
  return s.dims.empty() ? OptionalIntArrayRef(std::nullopt) : OptionalIntArrayRef(s.dims);
}
// The sample's dim argument: std::nullopt, or its list (an empty one reduces no dim).
OptionalIntArrayRef dim_arg(const SampleInput& s) {
  return s.every_dim ? OptionalIntArrayRef(std::nullopt) : OptionalIntArrayRef(s.dims);
}

// Reductions over dim lists: every layout the plan distinguishes (inner, outer and middle dims,
// transposed, sliced, expanded), keepdim, every dim (dim=None), no dim (an empty list), 0-dim,
// zero-size and a large input that takes the parallel, chunked path. `empty_reduction`: also
// reduce over a zero-size dim.
std::vector<SampleInput> reduction_samples(DType t, const Domain& d, bool empty_reduction = true) {
  std::vector<SampleInput> out;
  out.push_back(sample("inner dim", random_tensor({5, 7}, t, d), {1}));
  out.push_back(sample("outer dim", random_tensor({5, 7}, t, d), {0}));
  out.push_back(sample_every_dim("all dims", random_tensor({5, 7}, t, d)));
  out.push_back(sample_every_dim("all dims keepdim", random_tensor({5, 7}, t, d), true));
  out.push_back(sample("no dims", random_tensor({5, 7}, t, d), {}));
  out.push_back(sample("no dims keepdim", random_tensor({5, 7}, t, d), {}, true));
  out.push_back(sample("no dims transposed", random_tensor({7, 5}, t, d).t(), {}));
  out.push_back(sample("no dims 0-dim", random_tensor({}, t, d), {}));
  out.push_back(sample("no dims zero-size", random_tensor({0, 3}, t, d), {}));
  out.push_back(sample("both dims keepdim", random_tensor({5, 7}, t, d), {0, 1}, true));
  out.push_back(sample("middle dim", random_tensor({3, 4, 5}, t, d), {1}));
  out.push_back(sample("outer and inner dims", random_tensor({3, 4, 5}, t, d), {0, -1}, true));
  out.push_back(sample("transposed inner", random_tensor({7, 5}, t, d).t(), {1}));
  out.push_back(sample("transposed outer", random_tensor({7, 5}, t, d).t(), {0}, true));
  out.push_back(sample("permuted 3-d", random_tensor({4, 3, 5}, t, d).permute({2, 0, 1}), {0, 2}));
  out.push_back(sample("offset", random_tensor({6, 9}, t, d).slice(0, 1).slice(1, 2), {1}));
  out.push_back(sample("expanded", random_tensor({1, 7}, t, d).expand({5, 7}), {0}));
  out.push_back(sample_every_dim("0-dim", random_tensor({}, t, d)));
  out.push_back(sample("0-dim dim 0", random_tensor({}, t, d), {0}, true));
  out.push_back(sample("zero-size kept", random_tensor({0, 3}, t, d), {1}));
  if (empty_reduction) out.push_back(sample("zero-size reduced", random_tensor({0, 3}, t, d), {0}));
  out.push_back(sample("large inner", random_tensor({300, 700}, t, d), {1}));
  out.push_back(sample("large outer", random_tensor({300, 700}, t, d), {0}));
  out.push_back(sample_every_dim("large all", random_tensor({300, 700}, t, d)));
  if (empty_reduction) out.push_back(sample_every_dim("zero-size all dims", random_tensor({0, 3}, t, d)));
  if (is_floating(t)) {
    const std::vector<double> values = {kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0};
    const Tensor special = tensor(values, {2, 5}, DType::Float64).to(t);
    out.push_back(sample("special values", special, {1}));
    out.push_back(sample("special values, no dims", special, {}));
    out.push_back(sample("infinities",
                         tensor(std::vector<double>{kInf, 1.0, -kInf, 2.0, kInf, kInf}, {2, 3}, DType::Float64).to(t),
                         {1}));
  }
  return out;
}

// Single-dim samples (max.dim, argmax with dim): the first entry of `dims` is the dim.
std::vector<SampleInput> single_dim_samples(DType t, const Domain& d) {
  std::vector<SampleInput> out;
  for (SampleInput& s : reduction_samples(t, d, /*empty_reduction=*/false)) {
    if (s.dims.size() == 1) out.push_back(std::move(s));
  }
  // Ties: the first of equal elements wins.
  out.push_back(sample(
      "ties", tensor(std::vector<double>{1.0, 3.0, 3.0, 0.0, 2.0, 2.0, 2.0, 1.0}, {2, 4}, DType::Float64).to(t), {1}));
  return out;
}

// The reference's reduction over `dims` (std::nullopt: every dim): the values of each output
// element, in row-major order of the reduced dims, folded by f.
RefTensor reduce_ref(const RefTensor& a, OptionalIntArrayRef dims, bool keepdim, DType result,
                     const std::function<double(const std::vector<double>&)>& f) {
  const int64_t nd = a.dim();
  std::vector<bool> reduced(static_cast<size_t>(std::max<int64_t>(nd, 1)), !dims.has_value());
  if (dims) {
    for (int64_t d : *dims) reduced[static_cast<size_t>(d < 0 ? d + std::max<int64_t>(nd, 1) : d)] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[d]) shape.push_back(a.shape[d]);
    else if (keepdim) shape.push_back(1);
  }
  RefTensor r(shape, result);
  // Each input dim's step in the result: the result's row-major stride where the dim is kept, 0
  // where it is reduced (all of a row's elements land in one bucket).
  std::vector<int64_t> to_result(static_cast<size_t>(nd), 0);
  int64_t step = 1;
  for (int64_t d = nd - 1, k = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (!reduced[d]) {
      to_result[d] = step;
      step *= shape[k--];
    } else if (keepdim) {
      --k;
    }
  }
  std::vector<std::vector<double>> buckets(static_cast<size_t>(r.numel()));
  for_each_offset(a.shape, to_result, [&](int64_t i, int64_t off) { buckets[off].push_back(a.data[i]); });
  for (size_t o = 0; o < buckets.size(); ++o) r.data[o] = f(buckets[o]);
  return r;
}

double ref_sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double ref_prod(const std::vector<double>& v) {
  double s = 1;
  for (double x : v) s *= x;
  return s;
}
// The index of the first extreme value (NaN is the extreme).
int64_t ref_arg(const std::vector<double>& v, bool is_max) {
  int64_t best = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[best])) break;
    if (std::isnan(v[i]) || (is_max ? v[i] > v[best] : v[i] < v[best])) best = static_cast<int64_t>(i);
  }
  return best;
}
double ref_var(const std::vector<double>& v, double correction) {
  const double n = static_cast<double>(v.size());
  const double mean = ref_sum(v) / n;
  double m2 = 0;
  for (double x : v) m2 += (x - mean) * (x - mean);
  return m2 / std::max(0.0, n - correction);
}
// The value at stable-sorted position `pos` of a row and its index in the row; NaN sorts last
// (the order median and kthvalue use).
std::pair<double, int64_t> ref_order_statistic(const std::vector<double>& v, size_t pos) {
  std::vector<int64_t> order(v.size());
  for (size_t i = 0; i < v.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&v](int64_t a, int64_t b) {
    if (std::isnan(v[static_cast<size_t>(a)])) return false;
    return std::isnan(v[static_cast<size_t>(b)]) || v[static_cast<size_t>(a)] < v[static_cast<size_t>(b)];
  });
  const int64_t i = order[pos];
  return {v[static_cast<size_t>(i)], i};
}
// The lower median's position: the first NaN's when the row holds any.
size_t ref_median_position(const std::vector<double>& v) {
  size_t nans = 0;
  for (double x : v) nans += std::isnan(x) ? 1 : 0;
  return nans > 0 ? v.size() - nans : (v.size() - 1) / 2;
}
// mode of a row, counted directly: the most frequent value (NaN never equal to anything), the
// smallest of those equally frequent (NaN after every number), and the index of its last
// occurrence (a NaN is its own only occurrence: the first NaN when every element is NaN).
std::pair<double, int64_t> ref_mode(const std::vector<double>& v) {
  std::map<double, int64_t> counts;  // -0.0 and 0.0 are one key, as they compare equal
  for (double y : v) {
    if (!std::isnan(y)) ++counts[y];
  }
  auto count = [&counts](double x) { return std::isnan(x) ? int64_t{1} : counts.at(x); };
  int64_t best = 0;
  for (double x : v) best = std::max(best, count(x));
  size_t chosen = v.size();
  for (size_t i = 0; i < v.size(); ++i) {
    if (count(v[i]) != best) continue;
    const bool smaller = chosen == v.size() || (!std::isnan(v[i]) && (std::isnan(v[chosen]) || v[i] < v[chosen]));
    if (smaller) chosen = i;
  }
  if (!std::isnan(v[chosen])) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == v[chosen]) chosen = std::max(chosen, i);
    }
  }
  return {v[chosen], static_cast<int64_t>(chosen)};
}
double ref_norm(const std::vector<double>& v, double p) {
  if (std::isinf(p)) {
    double m = p > 0 ? 0 : kInf;
    for (double x : v) {
      if (std::isnan(x)) return kNaN;
      m = p > 0 ? std::max(m, std::fabs(x)) : std::min(m, std::fabs(x));
    }
    return m;
  }
  double s = 0;
  for (double x : v) s += p == 0 ? (x != 0 ? 1.0 : 0.0) : std::pow(std::fabs(x), p);
  return p == 0 || p == 1 ? s : std::pow(s, 1 / p);
}
double ref_logsumexp(const std::vector<double>& v) {
  double m = -kInf;
  for (double x : v) {
    if (std::isnan(x)) return kNaN;
    m = std::max(m, x);
  }
  if (std::isinf(m)) return m;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

DType sum_dtype(DType t) { return is_integral(t, true) ? DType::Int64 : t; }

// Sums of many values: the kernels' order differs from the reference's, so fp32 gets room for
// cancellation in the large samples; the exact accuracy tests are in tests/core.
Tolerance sum_tolerance(DType t) {
  if (t == DType::Float32) return {1e-4, 1e-5};
  return default_tolerance(t);
}

ErrorInput bad(std::string label, Tensor t, std::vector<int64_t> dims, const std::type_info& error,
               std::vector<std::string> needles) {
  return ErrorInput{sample(std::move(label), std::move(t), std::move(dims)), &error, std::move(needles)};
}
ErrorInput bad_every_dim(std::string label, Tensor t, const std::type_info& error, std::vector<std::string> needles) {
  return ErrorInput{sample_every_dim(std::move(label), std::move(t)), &error, std::move(needles)};
}

// The errors of every dim-list reduction.
std::vector<ErrorInput> dim_errors(const std::string& op, DType t = DType::Float32) {
  return {bad("dim out of range", random_tensor({2, 3}, t), {2}, typeid(IndexError), {op, "2"}),
          bad("negative dim out of range", random_tensor({2, 3}, t), {-3}, typeid(IndexError), {op, "-3"}),
          bad("repeated dim", random_tensor({2, 3}, t), {1, -1}, typeid(ValueError), {op, "multiple"})};
}

// A dim-list reduction entry; `fn(x, dims, keepdim)` calls it.
OpInfo dim_reduction(std::string name, std::vector<std::string> schemas, std::vector<DType> dtypes,
                     std::function<Tensor(const Tensor&, OptionalIntArrayRef, bool)> fn,
                     std::function<DType(DType)> result_dtype, std::function<double(const std::vector<double>&)> f,
                     Domain domain = {}, bool empty_reduction = true) {
  OpInfo info;
  info.name = name;
  info.family = OpFamily::Reduction;
  info.schemas = std::move(schemas);
  info.dtypes = std::move(dtypes);
  info.differentiable = true;
  info.samples = [domain, empty_reduction](DType t) { return reduction_samples(t, domain, empty_reduction); };
  info.op = [fn](const SampleInput& s) { return std::vector<Tensor>{fn(s.tensors[0], dim_arg(s), s.keepdim)}; };
  info.reference = [result_dtype, f](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{reduce_ref(in[0], dim_arg(s), s.keepdim, result_dtype(in[0].dtype), f)};
  };
  info.error_inputs = [name] { return dim_errors(name); };
  return info;
}

SampleInput bench_vector(int64_t n) {
  SampleInput s;
  s.tensors = {randn({n})};
  return s;
}

}  // namespace

ANATOMY_REGISTER_OPS(reduction) {
  std::vector<OpInfo> ops;

  OpInfo sum = dim_reduction(
      "sum", {"sum", "sum.dim_IntList", "sum.IntList_out"}, kAll,
      [](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) {
        return !dims && !keepdim ? anatomy::sum(x) : anatomy::sum(x, dims, keepdim);
      },
      sum_dtype, ref_sum);
  sum.notes = "integers and bool sum to int64";
  sum.tolerance = sum_tolerance;
  sum.out = [](const Tensor& o, const SampleInput& s) { sum_out(o, s.tensors[0], dim_arg(s), s.keepdim); };
  sum.bench_input = bench_vector;
  ops.push_back(sum);

  OpInfo sum_dt = dim_reduction(
      "sum_dtype", {"sum.dim_IntList"}, kNumeric,
      [](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) {
        return anatomy::sum(x, dims, keepdim, DType::Float64);
      },
      [](DType) { return DType::Float64; }, ref_sum);
  sum_dt.notes = "sum with dtype=float64 (the input is cast first)";
  sum_dt.tolerance = sum_tolerance;
  sum_dt.error_inputs = nullptr;
  ops.push_back(sum_dt);

  OpInfo mean = dim_reduction(
      "mean", {"mean", "mean.dim"}, kFloat,
      [](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) {
        return !dims && !keepdim ? anatomy::mean(x) : anatomy::mean(x, dims, keepdim);
      },
      [](DType t) { return t; },
      [](const std::vector<double>& v) { return ref_sum(v) / static_cast<double>(v.size()); });
  mean.schemas.push_back("mean.out");
  mean.out = [](const Tensor& o, const SampleInput& s) { mean_out(o, s.tensors[0], dim_arg(s), s.keepdim); };
  mean.tolerance = sum_tolerance;
  mean.bench_input = bench_vector;
  mean.error_inputs = [] {
    std::vector<ErrorInput> e = dim_errors("mean");
    e.push_back(bad("integer input", tensor({1, 2, 3}), {}, typeid(TypeError), {"mean", "int64"}));
    return e;
  };
  ops.push_back(mean);

  // Factors near 1 keep products of many values in range; integers are -1, 0 or 1 (exact).
  Domain near_one;
  near_one.low = 0.9;
  near_one.high = 1.1;
  near_one.int_low = -1;
  near_one.int_high = 2;
  OpInfo prod = dim_reduction(
      "prod", {"prod", "prod.dim_IntList"}, kAll,
      [](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) {
        return !dims && !keepdim ? anatomy::prod(x) : anatomy::prod(x, dims, keepdim);
      },
      sum_dtype, ref_prod, near_one);
  prod.tolerance = [](DType t) { return t == DType::Float32 ? Tolerance{1e-5, 1e-4} : default_tolerance(t); };
  prod.schemas.push_back("prod.IntList_out");
  prod.out = [](const Tensor& o, const SampleInput& s) { prod_out(o, s.tensors[0], dim_arg(s), s.keepdim); };
  ops.push_back(prod);

  for (bool is_max : {true, false}) {
    const std::string op = is_max ? "amax" : "amin";
    OpInfo a = dim_reduction(
        op, {op, op + ".out"}, kAll,
        [is_max](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) {
          return is_max ? anatomy::amax(x, dims, keepdim) : anatomy::amin(x, dims, keepdim);
        },
        [](DType t) { return t; },
        [is_max](const std::vector<double>& v) { return v[static_cast<size_t>(ref_arg(v, is_max))]; }, {},
        /*empty_reduction=*/false);
    a.notes = "NaN propagates";
    a.out = [is_max](const Tensor& o, const SampleInput& s) {
      if (is_max) {
        amax_out(o, s.tensors[0], dim_arg(s), s.keepdim);
      } else {
        amin_out(o, s.tensors[0], dim_arg(s), s.keepdim);
      }
    };
    if (is_max) a.bench_input = bench_vector;
    a.error_inputs = [op] {
      std::vector<ErrorInput> e = dim_errors(op);
      e.push_back(
          bad("empty reduced dim", random_tensor({0, 3}, DType::Float32), {0}, typeid(IndexError), {op, "non-zero"}));
      return e;
    };
    ops.push_back(a);

    // max / min: no dims (the whole tensor, 0-dim result) or one dim (values and indices).
    const std::string name = is_max ? "max" : "min";
    OpInfo m;
    m.name = name;
    m.family = OpFamily::Reduction;
    m.schemas = {name, name + ".dim", name + ".dim_" + name};  // the out= form: tests/core/test_reduce_out.cpp
    m.dtypes = kAll;
    m.differentiable = true;
    m.notes = "the dim form returns (values, indices), the first extreme's index";
    m.samples = [](DType t) {
      std::vector<SampleInput> s = single_dim_samples(t, {});
      s.push_back(sample("whole tensor", random_tensor({5, 7}, t), {}));
      s.push_back(sample("whole transposed", random_tensor({7, 5}, t).t(), {}));
      s.push_back(sample("whole 0-dim", random_tensor({}, t), {}));
      return s;
    };
    m.op = [is_max](const SampleInput& s) {
      const Tensor& x = s.tensors[0];
      if (s.dims.empty()) return std::vector<Tensor>{is_max ? anatomy::max(x) : anatomy::min(x)};
      auto [v, i] = is_max ? anatomy::max(x, s.dims[0], s.keepdim) : anatomy::min(x, s.dims[0], s.keepdim);
      return std::vector<Tensor>{v, i};
    };
    m.reference = [is_max](const std::vector<RefTensor>& in, const SampleInput& s) {
      auto value = [is_max](const std::vector<double>& v) { return v[static_cast<size_t>(ref_arg(v, is_max))]; };
      const OptionalIntArrayRef dims = one_dim_or_every_dim(s);
      std::vector<RefTensor> r = {reduce_ref(in[0], dims, s.keepdim, in[0].dtype, value)};
      if (!s.dims.empty()) {
        r.push_back(reduce_ref(in[0], dims, s.keepdim, DType::Int64, [is_max](const std::vector<double>& v) {
          return static_cast<double>(ref_arg(v, is_max));
        }));
      }
      return r;
    };
    m.error_inputs = [name] {
      std::vector<ErrorInput> e;
      e.push_back(bad("empty tensor", random_tensor({0, 3}, DType::Float32), {}, typeid(ValueError), {name, "numel"}));
      e.push_back(
          bad("empty reduced dim", random_tensor({0, 3}, DType::Float32), {0}, typeid(IndexError), {name, "non-zero"}));
      e.push_back(bad("dim out of range", random_tensor({2, 3}, DType::Float32), {2}, typeid(IndexError), {name, "2"}));
      return e;
    };
    ops.push_back(m);

    // argmax / argmin: flattened (dim=None) or along one dim.
    const std::string arg = is_max ? "argmax" : "argmin";
    OpInfo g;
    g.name = arg;
    g.family = OpFamily::Reduction;
    g.schemas = {arg, arg + ".out"};
    g.dtypes = kAll;
    g.samples = [](DType t) {
      std::vector<SampleInput> s = single_dim_samples(t, {});
      s.push_back(sample("flattened", random_tensor({5, 7}, t), {}));
      s.push_back(sample("flattened keepdim", random_tensor({5, 7}, t), {}, true));
      s.push_back(sample("flattened transposed", random_tensor({7, 5}, t).t(), {}));
      s.push_back(sample("flattened permuted", random_tensor({4, 3, 5}, t).permute({2, 0, 1}), {}));
      s.push_back(sample("flattened large", random_tensor({300, 700}, t), {}));
      return s;
    };
    g.op = [is_max](const SampleInput& s) {
      std::optional<int64_t> dim;
      if (!s.dims.empty()) dim = s.dims[0];
      return std::vector<Tensor>{is_max ? anatomy::argmax(s.tensors[0], dim, s.keepdim)
                                        : anatomy::argmin(s.tensors[0], dim, s.keepdim)};
    };
    g.out = [is_max](const Tensor& o, const SampleInput& s) {
      std::optional<int64_t> dim;
      if (!s.dims.empty()) dim = s.dims[0];
      if (is_max) {
        argmax_out(o, s.tensors[0], dim, s.keepdim);
      } else {
        argmin_out(o, s.tensors[0], dim, s.keepdim);
      }
    };
    g.reference = [is_max](const std::vector<RefTensor>& in, const SampleInput& s) {
      const OptionalIntArrayRef dims = one_dim_or_every_dim(s);
      return std::vector<RefTensor>{
          reduce_ref(in[0], dims, s.keepdim, DType::Int64,
                     [is_max](const std::vector<double>& v) { return static_cast<double>(ref_arg(v, is_max)); })};
    };
    g.error_inputs = [arg] {
      std::vector<ErrorInput> e;
      e.push_back(bad("empty tensor", random_tensor({0, 3}, DType::Float32), {}, typeid(ValueError), {arg, "numel"}));
      e.push_back(bad("empty reduced dim", random_tensor({0, 3}, DType::Float32), {0}, typeid(IndexError), {arg}));
      e.push_back(
          bad("dim out of range", random_tensor({2, 3}, DType::Float32), {-3}, typeid(IndexError), {arg, "-3"}));
      return e;
    };
    ops.push_back(g);
  }

  for (bool is_std : {false, true}) {
    const std::string name = is_std ? "std" : "var";
    for (double correction : {1.0, 0.0}) {
      OpInfo v = dim_reduction(
          correction == 1 ? name : name + "_population", {name + ".correction", name + ".correction_out"}, kFloat,
          [is_std, correction](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) {
            return is_std ? anatomy::std(x, dims, correction, keepdim) : anatomy::var(x, dims, correction, keepdim);
          },
          [](DType t) { return t; },
          [is_std, correction](const std::vector<double>& x) {
            const double r = ref_var(x, correction);
            return is_std ? std::sqrt(r) : r;
          });
      if (correction == 0) v.notes = "correction = 0";
      v.out = [is_std, correction](const Tensor& o, const SampleInput& s) {
        if (is_std) {
          std_out(o, s.tensors[0], dim_arg(s), correction, s.keepdim);
        } else {
          var_out(o, s.tensors[0], dim_arg(s), correction, s.keepdim);
        }
      };
      v.error_inputs = [name] {
        std::vector<ErrorInput> e = dim_errors(name);
        e.push_back(bad("integer input", tensor({1, 2, 3}), {}, typeid(TypeError), {name, "int64"}));
        return e;
      };
      ops.push_back(v);
    }
  }

  for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.0}) {
    OpInfo n = dim_reduction(
        p == 2 ? "norm" : fmt::format("norm_p{}", p), {"norm.ScalarOpt_dim", "norm.out"}, kFloat,
        [p](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) { return anatomy::norm(x, p, dims, keepdim); },
        [](DType t) { return t; }, [p](const std::vector<double>& v) { return ref_norm(v, p); }, Domain{},
        /*empty_reduction=*/!std::isinf(p));  // the inf-norms are a max and a min: no value over nothing
    n.notes = fmt::format("p = {}", p);
    n.out = [p](const Tensor& o, const SampleInput& s) { norm_out(o, s.tensors[0], p, dim_arg(s), s.keepdim); };
    n.tolerance = [](DType t) { return t == DType::Float32 ? Tolerance{1e-4, 1e-5} : default_tolerance(t); };
    n.differentiable = p != 0;
    if (p == 2) {
      n.error_inputs = [] {
        std::vector<ErrorInput> e = dim_errors("norm");
        e.push_back(bad("integer input", tensor({1, 2, 3}), {}, typeid(TypeError), {"norm", "int64"}));
        return e;
      };
    } else if (std::isinf(p)) {
      n.error_inputs = [p] {
        return std::vector<ErrorInput>{bad("empty reduced dim", random_tensor({0, 3}, DType::Float32), {0},
                                           typeid(ValueError), {"norm", p > 0 ? "inf norm" : "-inf norm", "[0, 3]"}),
                                       bad_every_dim("empty tensor", random_tensor({0}, DType::Float32),
                                                     typeid(ValueError), {"norm", "empty extent", "dim=None"})};
      };
    } else {
      n.error_inputs = nullptr;
    }
    ops.push_back(n);
  }

  OpInfo lse = dim_reduction(
      "logsumexp", {"logsumexp", "logsumexp.out"}, kNumeric,
      [](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) { return anatomy::logsumexp(x, dims, keepdim); },
      [](DType t) { return is_floating(t) ? t : kDefaultFloat; }, ref_logsumexp);
  lse.notes = "integers give the default float";
  lse.out = [](const Tensor& o, const SampleInput& s) { logsumexp_out(o, s.tensors[0], dim_arg(s), s.keepdim); };
  lse.tolerance = [](DType t) { return t == DType::Float32 ? Tolerance{1e-5, 4e-6} : default_tolerance(t); };
  ops.push_back(lse);

  for (bool is_any : {true, false}) {
    const std::string name = is_any ? "any" : "all";
    OpInfo a = dim_reduction(
        name, {name, name + ".dims", name + ".dims_out"}, kAll,
        [is_any](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) {
          if (!dims && !keepdim) return is_any ? anatomy::any(x) : anatomy::all(x);
          return is_any ? anatomy::any(x, dims, keepdim) : anatomy::all(x, dims, keepdim);
        },
        [](DType) { return DType::Bool; },
        [is_any](const std::vector<double>& v) {
          bool r = !is_any;
          for (double x : v) r = is_any ? (r || x != 0) : (r && x != 0);
          return r ? 1.0 : 0.0;
        });
    a.differentiable = false;
    a.notes = "bool result; NaN counts as true";
    a.out = [is_any](const Tensor& o, const SampleInput& s) {
      if (is_any) {
        any_out(o, s.tensors[0], dim_arg(s), s.keepdim);
      } else {
        all_out(o, s.tensors[0], dim_arg(s), s.keepdim);
      }
    };
    ops.push_back(a);
  }

  OpInfo count = dim_reduction(
      "count_nonzero", {"count_nonzero.dim_IntList", "count_nonzero.dim_IntList_out"}, kAll,
      [](const Tensor& x, OptionalIntArrayRef dims, bool) { return anatomy::count_nonzero(x, dims); },
      [](DType) { return DType::Int64; },
      [](const std::vector<double>& v) {
        double c = 0;
        for (double x : v) c += x != 0 ? 1 : 0;
        return c;
      });
  count.differentiable = false;
  count.out = [](const Tensor& o, const SampleInput& s) { count_nonzero_out(o, s.tensors[0], dim_arg(s)); };
  // No keepdim: the samples' keepdim is ignored, so the reference drops reduced dims.
  count.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{reduce_ref(in[0], dim_arg(s), false, DType::Int64, [](const std::vector<double>& v) {
      double c = 0;
      for (double x : v) c += x != 0 ? 1 : 0;
      return c;
    })};
  };
  ops.push_back(count);

  // ---- statistics (dispatch/ops/statistics.cpp) ----
  for (bool is_std : {false, true}) {
    const std::string name = is_std ? "std_mean" : "var_mean";
    OpInfo v = dim_reduction(
        name, {name + ".correction"}, kFloat,
        [is_std](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) {
          return std::get<0>(is_std ? std_mean(x, dims, 1, keepdim) : var_mean(x, dims, 1, keepdim));
        },
        [](DType t) { return t; }, ref_sum);
    v.notes = "(var or std with correction 1, mean)";
    v.op = [is_std](const SampleInput& s) {
      auto [a, m] =
          is_std ? std_mean(s.tensors[0], dim_arg(s), 1, s.keepdim) : var_mean(s.tensors[0], dim_arg(s), 1, s.keepdim);
      return std::vector<Tensor>{a, m};
    };
    v.reference = [is_std](const std::vector<RefTensor>& in, const SampleInput& s) {
      auto spread = [is_std](const std::vector<double>& x) {
        const double r = ref_var(x, 1);
        return is_std ? std::sqrt(r) : r;
      };
      auto mean = [](const std::vector<double>& x) { return ref_sum(x) / static_cast<double>(x.size()); };
      return std::vector<RefTensor>{reduce_ref(in[0], dim_arg(s), s.keepdim, in[0].dtype, spread),
                                    reduce_ref(in[0], dim_arg(s), s.keepdim, in[0].dtype, mean)};
    };
    v.error_inputs = [name] {
      std::vector<ErrorInput> e = dim_errors(name);
      e.push_back(bad("integer input", tensor({1, 2, 3}), {}, typeid(TypeError), {name, "int64"}));
      return e;
    };
    ops.push_back(v);
  }

  auto ref_nansum = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::isnan(x) ? 0 : x;
    return s;
  };
  OpInfo nsum = dim_reduction(
      "nansum", {"nansum"}, kAll,
      [](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) { return anatomy::nansum(x, dims, keepdim); },
      sum_dtype, ref_nansum);
  nsum.notes = "NaN counts as zero; integers and bool sum to int64";
  nsum.tolerance = sum_tolerance;
  ops.push_back(nsum);

  OpInfo nmean = dim_reduction(
      "nanmean", {"nanmean"}, kFloat,
      [](const Tensor& x, OptionalIntArrayRef dims, bool keepdim) { return anatomy::nanmean(x, dims, keepdim); },
      [](DType t) { return t; },
      [ref_nansum](const std::vector<double>& v) {
        double n = 0;
        for (double x : v) n += std::isnan(x) ? 0 : 1;
        return ref_nansum(v) / n;
      });
  nmean.notes = "NaN left out; NaN where every element is NaN";
  nmean.error_inputs = [] {
    std::vector<ErrorInput> e = dim_errors("nanmean");
    e.push_back(bad("integer input", tensor({1, 2, 3}), {}, typeid(TypeError), {"nanmean", "int64"}));
    return e;
  };
  ops.push_back(nmean);

  OpInfo mm;
  mm.name = "aminmax";
  mm.family = OpFamily::Reduction;
  mm.schemas = {"aminmax"};
  mm.dtypes = kAll;
  mm.differentiable = true;
  mm.notes = "(amin, amax) over one dim or every dim";
  mm.samples = [](DType t) {
    std::vector<SampleInput> s = single_dim_samples(t, {});
    s.push_back(sample("whole tensor", random_tensor({5, 7}, t), {}));
    s.push_back(sample("whole tensor keepdim", random_tensor({5, 7}, t), {}, true));
    s.push_back(sample("whole transposed", random_tensor({7, 5}, t).t(), {}));
    return s;
  };
  mm.op = [](const SampleInput& s) {
    std::optional<int64_t> dim;
    if (!s.dims.empty()) dim = s.dims[0];
    auto [lo, hi] = anatomy::aminmax(s.tensors[0], dim, s.keepdim);
    return std::vector<Tensor>{lo, hi};
  };
  mm.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const OptionalIntArrayRef dims = one_dim_or_every_dim(s);
    auto pick = [](bool is_max) {
      return [is_max](const std::vector<double>& v) { return v[static_cast<size_t>(ref_arg(v, is_max))]; };
    };
    return std::vector<RefTensor>{reduce_ref(in[0], dims, s.keepdim, in[0].dtype, pick(false)),
                                  reduce_ref(in[0], dims, s.keepdim, in[0].dtype, pick(true))};
  };
  mm.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("empty tensor", random_tensor({0, 3}, DType::Float32), {}, typeid(ValueError), {"aminmax", "numel 0"}),
        bad("empty reduced dim", random_tensor({0, 3}, DType::Float32), {0}, typeid(IndexError), {"aminmax", "dim 0"}),
        bad("dim out of range", random_tensor({2, 3}, DType::Float32), {2}, typeid(IndexError), {"aminmax", "2"})};
  };
  ops.push_back(mm);

  // median and kthvalue: values and the index the stable order gives (ties: the k-th in input
  // order), NaN sorted last.
  OpInfo med;
  med.name = "median";
  med.family = OpFamily::Reduction;
  med.schemas = {"median", "median.dim"};
  med.dtypes = kNumeric;
  med.differentiable = true;
  med.notes = "the lower median; NaN (and the first NaN's index) where a row holds NaN";
  med.samples = [](DType t) {
    std::vector<SampleInput> s = single_dim_samples(t, {});
    s.push_back(sample("even row", random_tensor({3, 6}, t), {1}));
    s.push_back(sample("whole tensor", random_tensor({5, 7}, t), {}));
    s.push_back(sample("whole transposed", random_tensor({7, 5}, t).t(), {}));
    s.push_back(sample("whole 0-dim", random_tensor({}, t), {}));
    if (is_floating(t)) s.push_back(sample("whole empty", random_tensor({0, 4}, t), {}));
    return s;
  };
  med.op = [](const SampleInput& s) {
    const Tensor& x = s.tensors[0];
    if (s.dims.empty()) return std::vector<Tensor>{anatomy::median(x)};
    auto [v, i] = anatomy::median(x, s.dims[0], s.keepdim);
    return std::vector<Tensor>{v, i};
  };
  med.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const OptionalIntArrayRef dims = one_dim_or_every_dim(s);
    std::vector<RefTensor> r = {reduce_ref(in[0], dims, s.keepdim, in[0].dtype, [](const std::vector<double>& v) {
      return v.empty() ? kNaN : ref_order_statistic(v, ref_median_position(v)).first;
    })};
    if (!s.dims.empty()) {
      r.push_back(reduce_ref(in[0], dims, s.keepdim, DType::Int64, [](const std::vector<double>& v) {
        return static_cast<double>(ref_order_statistic(v, ref_median_position(v)).second);
      }));
    }
    return r;
  };
  med.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("bool input", random_tensor({2, 3}, DType::Bool), {1}, typeid(TypeError), {"median", "bool"}),
        bad("empty reduced dim", random_tensor({0, 3}, DType::Float32), {0}, typeid(IndexError), {"median", "dim 0"}),
        bad("empty integer tensor", random_tensor({0, 3}, DType::Int64), {}, typeid(ValueError), {"median", "int64"}),
        bad("dim out of range", random_tensor({2, 3}, DType::Float32), {2}, typeid(IndexError), {"median", "2"})};
  };
  ops.push_back(med);

  OpInfo kth;
  kth.name = "kthvalue";
  kth.family = OpFamily::Reduction;
  kth.schemas = {"kthvalue"};
  kth.dtypes = kNumeric;
  kth.differentiable = true;
  kth.notes = "k from 1; NaN is larger than every number";
  kth.samples = [](DType t) {
    std::vector<SampleInput> out;
    for (SampleInput& s : single_dim_samples(t, {})) {
      const Tensor& x = s.tensors[0];
      const int64_t n = x.dim() == 0 ? 1 : x.size(s.dims[0]);
      for (int64_t k : std::set<int64_t>{1, (n + 1) / 2, n}) {
        SampleInput c = s;
        c.ints = {k};
        c.label += fmt::format(", k = {}", k);
        out.push_back(std::move(c));
      }
    }
    return out;
  };
  kth.op = [](const SampleInput& s) {
    auto [v, i] = anatomy::kthvalue(s.tensors[0], s.ints[0], s.dims[0], s.keepdim);
    return std::vector<Tensor>{v, i};
  };
  kth.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const size_t pos = static_cast<size_t>(s.ints[0] - 1);
    const OptionalIntArrayRef dims(s.dims);
    return std::vector<RefTensor>{
        reduce_ref(in[0], dims, s.keepdim, in[0].dtype,
                   [pos](const std::vector<double>& v) { return ref_order_statistic(v, pos).first; }),
        reduce_ref(in[0], dims, s.keepdim, DType::Int64, [pos](const std::vector<double>& v) {
          return static_cast<double>(ref_order_statistic(v, pos).second);
        })};
  };
  kth.error_inputs = [] {
    ErrorInput big = bad("k past the dim", random_tensor({2, 3}, DType::Float32), {1}, typeid(IndexError),
                         {"kthvalue", "k = 4", "size 3"});
    big.sample.ints = {4};
    ErrorInput zero =
        bad("k = 0", random_tensor({2, 3}, DType::Float32), {1}, typeid(IndexError), {"kthvalue", "k = 0"});
    zero.sample.ints = {0};
    ErrorInput boolean =
        bad("bool input", random_tensor({2, 3}, DType::Bool), {1}, typeid(TypeError), {"kthvalue", "bool"});
    boolean.sample.ints = {1};
    return std::vector<ErrorInput>{big, zero, boolean};
  };
  ops.push_back(kth);

  // mode: the smallest of the most frequent values and its last index; samples drawn from a few
  // values repeat (labelled "ties": moving one of them changes the answer, so gradcheck skips
  // them), the others are distinct and pick the smallest.
  OpInfo mode;
  mode.name = "mode";
  mode.family = OpFamily::Reduction;
  mode.schemas = {"mode"};
  mode.dtypes = kAll;
  mode.differentiable = true;
  mode.notes = "the smallest of the most frequent values and its last index; every NaN is its own value";
  mode.samples = [](DType t) {
    std::vector<SampleInput> s = single_dim_samples(t, {});
    Domain few;
    few.int_low = 0;
    few.int_high = 4;
    auto repeating = [&](std::vector<int64_t> shape) {
      return random_tensor(std::move(shape), DType::Int64, few).to(t);
    };
    s.push_back(sample("ties, inner dim", repeating({6, 9}), {1}));
    s.push_back(sample("ties, outer dim keepdim", repeating({9, 4}), {0}, true));
    s.push_back(sample("ties, transposed", repeating({9, 5}).t(), {1}));
    s.push_back(sample("ties, offset 3-d", repeating({3, 8, 5}).slice(1, 1).slice(2, 1), {1}));
    s.push_back(sample("ties, long rows", repeating({20, 300}), {1}));
    s.push_back(sample("ties, default dim", repeating({4, 7}), {-1}));
    if (is_floating(t)) {
      const std::vector<double> nan_rows = {kNaN, 1.0, kNaN, 2.0, kNaN, kNaN, kNaN, kNaN,
                                            -0.0, 0.0, kNaN, 3.0, 3.0,  0.0,  kNaN, -0.0};
      s.push_back(sample("ties, NaN and signed zeros", tensor(nan_rows, {4, 4}, DType::Float64).to(t), {1}));
    }
    return s;
  };
  mode.op = [](const SampleInput& s) {
    auto [v, i] = anatomy::mode(s.tensors[0], s.dims[0], s.keepdim);
    return std::vector<Tensor>{v, i};
  };
  mode.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const OptionalIntArrayRef dims(s.dims);
    return std::vector<RefTensor>{
        reduce_ref(in[0], dims, s.keepdim, in[0].dtype, [](const std::vector<double>& v) { return ref_mode(v).first; }),
        reduce_ref(in[0], dims, s.keepdim, DType::Int64,
                   [](const std::vector<double>& v) { return static_cast<double>(ref_mode(v).second); })};
  };
  mode.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("empty reduced dim", random_tensor({0, 3}, DType::Float32), {0}, typeid(IndexError), {"mode", "dim 0"}),
        bad("dim out of range", random_tensor({2, 3}, DType::Float32), {2}, typeid(IndexError), {"mode", "2"})};
  };
  ops.push_back(mode);
  return ops;
}

}  // namespace anatomy::testing
