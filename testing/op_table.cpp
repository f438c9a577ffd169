// The op table's registry, reference helpers, standard samples and comparison.
#include "anatomy/testing/op_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/operator_entry.h"

namespace anatomy::testing {

// ---- RefTensor ----

RefTensor::RefTensor(std::vector<int64_t> s, DType t, double fill) : shape(std::move(s)), dtype(t) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  data.assign(static_cast<size_t>(n), fill);
}

std::vector<int64_t> RefTensor::strides() const {
  std::vector<int64_t> st(shape.size(), 1);
  for (int64_t d = dim() - 2; d >= 0; --d) st[d] = st[d + 1] * shape[d + 1];
  return st;
}

int64_t RefTensor::offset(const std::vector<int64_t>& index) const {
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + index[d];
  return off;
}

void for_each_index(const std::vector<int64_t>& shape, const std::function<void(const std::vector<int64_t>&)>& fn) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(index);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

RefTensor to_ref(const Tensor& t) {
  RefTensor r;
  if (!t.defined()) {
    r.defined = false;
    return r;
  }
  Tensor c = t.is_cpu() ? t : t.cpu();
  r = RefTensor(std::vector<int64_t>(c.sizes().begin(), c.sizes().end()), c.dtype());
  const std::vector<int64_t> strides(c.strides().begin(), c.strides().end());
  visit_dtype(c.dtype(), "to_ref", [&]<typename T>() {
    const T* base = static_cast<const T*>(c.data_ptr());
    double* out = r.data.data();
    for_each_offset(r.shape, strides, [&](int64_t i, int64_t off) { out[i] = convert<double>(base[off]); });
  });
  return r;
}

std::vector<int64_t> broadcast_shape(const std::vector<RefTensor>& inputs) {
  size_t ndim = 0;
  for (const RefTensor& t : inputs) ndim = std::max(ndim, t.shape.size());
  std::vector<int64_t> out(ndim, 1);
  for (const RefTensor& t : inputs) {
    const size_t lead = ndim - t.shape.size();
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.shape[d] != 1) out[lead + d] = t.shape[d];
    }
  }
  return out;
}

namespace {
// The strides that read `t` at the indices of the broadcast shape `shape`: its row-major strides,
// 0 along the dims it is broadcast over (and the leading dims it lacks).
std::vector<int64_t> broadcast_strides(const RefTensor& t, const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  const size_t lead = shape.size() - t.shape.size();
  int64_t step = 1;
  for (size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] != 1) strides[lead + d] = step;
    step *= t.shape[d];
  }
  return strides;
}
}  // namespace

RefTensor map_unary(const RefTensor& a, DType result, const std::function<double(double)>& f) {
  RefTensor r(a.shape, result);
  for (size_t i = 0; i < a.data.size(); ++i) r.data[i] = f(a.data[i]);
  return r;
}

RefTensor map_binary(const RefTensor& a, const RefTensor& b, DType result,
                     const std::function<double(double, double)>& f) {
  RefTensor r(broadcast_shape({a, b}), result);
  for_each_offsets<2>(r.shape, {broadcast_strides(a, r.shape), broadcast_strides(b, r.shape)},
                      [&](int64_t i, const std::array<int64_t, 2>& o) { r.data[i] = f(a.data[o[0]], b.data[o[1]]); });
  return r;
}

RefTensor map_ternary(const RefTensor& a, const RefTensor& b, const RefTensor& c, DType result,
                      const std::function<double(double, double, double)>& f) {
  RefTensor r(broadcast_shape({a, b, c}), result);
  for_each_offsets<3>(
      r.shape, {broadcast_strides(a, r.shape), broadcast_strides(b, r.shape), broadcast_strides(c, r.shape)},
      [&](int64_t i, const std::array<int64_t, 3>& o) { r.data[i] = f(a.data[o[0]], b.data[o[1]], c.data[o[2]]); });
  return r;
}

DType promoted_dtype(const std::vector<Tensor>& tensors) {
  ResultTypeState state;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    if (t.impl()->is_wrapped_number()) state.add_wrapped_number(t.dtype());
    else if (t.dim() == 0) state.add_zero_dim_tensor(t.dtype());
    else state.add_tensor(t.dtype());
  }
  return state.result();
}

namespace {
// v rounded to T, the element type of `dtype`; NaN stays as it is for an integer dtype, for
// compare() to report.
template <typename T>
double rounded_as(double v, DType dtype) {
  if (std::isnan(v) && !is_floating(dtype)) return v;
  return convert<double>(convert<T>(v));
}
}  // namespace

double round_to(double v, DType dtype) {
  return visit_dtype(dtype, "round_to", [&]<typename T>() { return rounded_as<T>(v, dtype); });
}

// ---- samples ----

Tensor random_tensor(std::vector<int64_t> shape, DType dtype, const Domain& domain) {
  // Drawn as fp64 from the library's generator, shaped into the domain here (the sample must not
  // depend on the kernels under test), then converted.
  if (dtype == DType::Bool) return randint(0, 2, shape, DType::Bool);
  std::vector<double> v = to_ref(rand(shape, DType::Float64)).data;
  if (is_floating(dtype)) {
    for (double& x : v) {
      x = domain.low + x * (domain.high - domain.low);
      if (domain.exclude_zero && std::fabs(x) < 0.25) x += x < 0 ? -0.5 : 0.5;
    }
  } else {
    int64_t lo = domain.int_low, hi = domain.int_high;
    if (dtype == DType::UInt8) lo = std::max<int64_t>(lo, 0), hi = std::min<int64_t>(hi, 256);
    if (dtype == DType::Int8) lo = std::max<int64_t>(lo, -128), hi = std::min<int64_t>(hi, 128);
    if (hi <= lo) hi = lo + 1;
    for (double& x : v) {
      x = std::floor(lo + x * static_cast<double>(hi - lo));
      if (domain.exclude_zero && x == 0) x = hi - 1 > 0 ? hi - 1 : lo;
    }
  }
  return tensor(v, shape, DType::Float64).to(dtype);
}

namespace {
const Domain& domain_of(const std::vector<Domain>& domains, size_t i) {
  static const Domain kDefault;
  if (domains.empty()) return kDefault;
  return domains[std::min(i, domains.size() - 1)];
}

// A dtype of the other category than `t`, for mixed-dtype samples.
DType mixed_partner(DType t) {
  if (t == DType::Float64) return DType::Float32;
  if (is_floating(t)) return DType::Int64;
  if (t == DType::Bool) return DType::Int32;
  return DType::Float32;
}
}  // namespace

std::vector<SampleInput> elementwise_samples(int arity, DType dtype, const std::vector<Domain>& domains, bool mixed) {
  std::vector<SampleInput> out;
  auto make = [&](const std::string& label, auto&& shape_of) {
    SampleInput s;
    s.label = label;
    for (int i = 0; i < arity; ++i) s.tensors.push_back(shape_of(i, domain_of(domains, i)));
    out.push_back(std::move(s));
  };
  make("contiguous", [&](int, const Domain& d) { return random_tensor({5, 7}, dtype, d); });
  make("transposed", [&](int, const Domain& d) { return random_tensor({7, 5}, dtype, d).t(); });
  make("offset", [&](int, const Domain& d) { return random_tensor({6, 9}, dtype, d).slice(0, 1).slice(1, 2); });
  make("broadcast", [&](int i, const Domain& d) {
    return i % 2 == 0 ? random_tensor({5, 1}, dtype, d) : random_tensor({1, 7}, dtype, d);
  });
  make("expanded", [&](int, const Domain& d) { return random_tensor({1, 7}, dtype, d).expand({5, 7}); });
  make("0-dim", [&](int, const Domain& d) { return random_tensor({}, dtype, d); });
  make("zero-size", [&](int, const Domain& d) { return random_tensor({0, 3}, dtype, d); });
  make("large", [&](int, const Domain& d) { return random_tensor({257, 300}, dtype, d); });
  if (arity >= 2) {
    make("0-dim operand", [&](int i, const Domain& d) {
      return i == 1 ? random_tensor({}, dtype, d) : random_tensor({4, 3}, dtype, d);
    });
    make("wrapped scalar", [&](int i, const Domain& d) {
      if (i != 1) return random_tensor({4, 3}, dtype, d);
      Tensor s = random_tensor({},
                               is_floating(dtype)     ? DType::Float64
                               : dtype == DType::Bool ? DType::Bool
                                                      : DType::Int64,
                               d);
      s.impl()->set_wrapped_number(true);
      return s;
    });
    if (mixed) {
      make("mixed dtypes", [&](int i, const Domain& d) {
        return random_tensor({3, 4}, i == 1 ? mixed_partner(dtype) : dtype, d);
      });
    }
  }
  if (is_floating(dtype)) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    make("special values", [&](int i, const Domain&) {
      std::vector<double> v = {nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 0.5};
      std::rotate(v.begin(), v.begin() + i, v.end());
      return tensor(v, {8}, DType::Float64).to(dtype);
    });
  }
  return out;
}

// ---- the table ----

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return {1e-3, 2e-3};
    case DType::BFloat16:
      return {1e-2, 1.6e-2};
    case DType::Float32:
      return {1e-6, 2e-6};
    case DType::Float64:
      return {1e-12, 1e-12};
    default:
      return {0, 0};
  }
}

Tolerance tolerance_for(const OpInfo& info, DType sample, DType result) {
  auto of = [&](DType t) { return info.tolerance ? info.tolerance(t) : default_tolerance(t); };
  const Tolerance a = of(sample), b = of(result);
  return {std::max(a.atol, b.atol), std::max(a.rtol, b.rtol)};
}

const char* family_name(OpFamily f) {
  switch (f) {
    case OpFamily::Unary:
      return "unary";
    case OpFamily::Binary:
      return "binary";
    case OpFamily::Reduction:
      return "reduction";
    case OpFamily::NN:
      return "nn";
    case OpFamily::Linalg:
      return "linalg";
    case OpFamily::Indexing:
      return "indexing";
  }
  return "?";
}

namespace {
std::vector<OpInfo>& registry() {
  static std::vector<OpInfo> entries;
  return entries;
}
bool g_sorted = false;
}  // namespace

void register_ops(std::vector<OpInfo> entries) {
  for (OpInfo& e : entries) registry().push_back(std::move(e));
  g_sorted = false;
}

const std::vector<OpInfo>& op_table() {
  if (!g_sorted) {
    std::stable_sort(registry().begin(), registry().end(), [](const OpInfo& a, const OpInfo& b) {
      if (a.family != b.family) return a.family < b.family;
      return a.name < b.name;
    });
    g_sorted = true;
  }
  return registry();
}

std::vector<const OpInfo*> ops_in(OpFamily family) {
  std::vector<const OpInfo*> out;
  for (const OpInfo& e : op_table()) {
    if (e.family == family) out.push_back(&e);
  }
  return out;
}

// ---- checking ----

std::string compare(const Tensor& got, const RefTensor& want, Tolerance tol) {
  if (!got.defined()) return "the result is an undefined tensor";
  if (got.dtype() != want.dtype) return fmt::format("dtype {}, expected {}", name(got.dtype()), name(want.dtype));
  std::vector<int64_t> shape(got.sizes().begin(), got.sizes().end());
  if (shape != want.shape) {
    return fmt::format("shape [{}], expected [{}]", fmt::join(shape, ", "), fmt::join(want.shape, ", "));
  }
  RefTensor g = to_ref(got);
  // The expected values rounded to the result's dtype, as round_to does, with one dtype visit.
  std::vector<double> rounded = want.data;
  visit_dtype(want.dtype, "compare", [&]<typename T>() {
    for (double& w : rounded) w = rounded_as<T>(w, want.dtype);
  });
  for (size_t i = 0; i < g.data.size(); ++i) {
    const double w = rounded[i], v = g.data[i];
    bool ok;
    if (std::isnan(w) || std::isnan(v)) ok = std::isnan(w) && std::isnan(v);
    else if (std::isinf(w) || std::isinf(v)) ok = v == w;
    else ok = std::fabs(v - w) <= tol.atol + tol.rtol * std::fabs(w);
    if (!ok) {
      std::vector<int64_t> index(shape.size());
      int64_t rest = static_cast<int64_t>(i);
      for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
        index[d] = rest % shape[d];
        rest /= shape[d];
      }
      return fmt::format("at [{}]: got {}, expected {} (exact {}; atol {}, rtol {})", fmt::join(index, ", "), v, w,
                         want.data[i], tol.atol, tol.rtol);
    }
  }
  return "";
}

SampleInput make_sample(std::string label, std::vector<Tensor> tensors, std::vector<int64_t> dims,
                        std::vector<int64_t> ints, std::vector<double> scalars) {
  SampleInput s;
  s.label = std::move(label);
  s.tensors = std::move(tensors);
  s.dims = std::move(dims);
  s.ints = std::move(ints);
  s.scalars = std::move(scalars);
  return s;
}

ErrorInput make_error(std::string label, std::vector<Tensor> tensors, const std::type_info& error,
                      std::vector<std::string> needles, std::vector<int64_t> dims, std::vector<int64_t> ints,
                      std::vector<double> scalars) {
  return {make_sample(std::move(label), std::move(tensors), std::move(dims), std::move(ints), std::move(scalars)),
          &error, std::move(needles)};
}

}  // namespace anatomy::testing
