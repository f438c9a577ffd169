// Op-table entries: counting values (unique, bincount, histc). The references count with plain
// loops over the flattened values: a std::map for unique (NaN kept apart, each its own value),
// an array for bincount and histc (bins found in fp64, as the operator finds them).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

using Shape = std::vector<int64_t>;

const std::vector<DType> kAll = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                                 DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kFloat = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kInteger = {DType::UInt8, DType::Int8, DType::Int32, DType::Int64};
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A sample with ints and scalars (these entries take no dims).
SampleInput sample(std::string label, std::vector<Tensor> tensors, std::vector<int64_t> ints = {},
                   std::vector<double> scalars = {}) {
  return make_sample(std::move(label), std::move(tensors), {}, std::move(ints), std::move(scalars));
}

// Values drawn from a few integers, so that they repeat.
Tensor repeating(Shape shape, DType t, int64_t high = 6) {
  Domain d;
  d.int_low = 0;
  d.int_high = high;
  return random_tensor(std::move(shape), DType::Int64, d).to(t);
}

OpInfo unique_entry() {
  OpInfo info;
  info.name = "unique";
  info.family = OpFamily::Reduction;
  info.schemas = {"_unique2"};
  info.dtypes = kAll;
  info.notes = "sorted values, inverse and counts; every NaN is its own value";
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    s.push_back(sample("repeating 2-D", {repeating({5, 7}, t)}));
    s.push_back(sample("transposed", {repeating({7, 5}, t).t()}));
    s.push_back(sample("offset", {repeating({6, 9}, t).slice(0, 1).slice(1, 2)}));
    s.push_back(sample("distinct", {random_tensor({40}, t)}));
    s.push_back(sample("0-dim", {random_tensor({}, t)}));
    s.push_back(sample("zero-size", {random_tensor({0, 3}, t)}));
    s.push_back(sample("large", {repeating({300, 700}, t, 50)}));
    if (t == DType::Int64) {  // a range that fits int32 far from zero (CUDA sorts x - min as int32)
      s.push_back(sample("far from zero", {repeating({50, 40}, t, 100000).sub(Scalar(int64_t{1} << 40))}));
    }
    if (is_floating(t)) {
      s.push_back(
          sample("NaN, infinities and signed zeros",
                 {tensor(std::vector<double>{kNaN, 1.0, -0.0, 0.0, kNaN, INFINITY, -INFINITY, 1.0}, {8}, DType::Float64)
                      .to(t)}));
    }
    return s;
  };
  info.op = [](const SampleInput& s) {
    auto [values, inverse, counts] = unique(s.tensors[0], true, true, true);
    return std::vector<Tensor>{values, inverse, counts};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    const RefTensor& x = in[0];
    // -0.0 and 0.0 are one value (the first in sorted order is kept), NaN each their own.
    std::map<double, int64_t> count;
    int64_t nans = 0;
    for (double v : x.data) {
      if (std::isnan(v)) ++nans;
      else ++count[v == 0 ? 0.0 : v];
    }
    const int64_t k = static_cast<int64_t>(count.size()) + nans;
    RefTensor values({k}, x.dtype), counts({k}, DType::Int64), inverse(x.shape, DType::Int64);
    std::map<double, int64_t> position;
    int64_t i = 0;
    for (const auto& [v, c] : count) {
      position[v] = i;
      values.data[i] = v;
      counts.data[i] = static_cast<double>(c);
      ++i;
    }
    // NaN sorts last, each in input order.
    for (size_t j = 0; j < x.data.size(); ++j) {
      const double v = x.data[j];
      if (std::isnan(v)) {
        values.data[i] = kNaN;
        counts.data[i] = 1;
        inverse.data[j] = static_cast<double>(i++);
      } else {
        inverse.data[j] = static_cast<double>(position[v == 0 ? 0.0 : v]);
      }
    }
    return std::vector<RefTensor>{values, inverse, counts};
  };
  // The unique values compare as numbers: -0.0 and 0.0 are one value, printed either way.
  info.tolerance = [](DType) { return Tolerance{0, 0}; };
  return info;
}

OpInfo bincount_entry() {
  OpInfo info;
  info.name = "bincount";
  info.family = OpFamily::Reduction;
  info.schemas = {"bincount"};
  info.dtypes = kInteger;
  info.notes = "1-d non-negative integers; int64 counts, or the weights' sums (floating weights keep their dtype)";
  // ints: {minlength}; a second tensor: the weights.
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    s.push_back(sample("counts", {repeating({30}, t, 9)}, {0}));
    s.push_back(sample("minlength beyond the largest", {repeating({10}, t, 4)}, {12}));
    s.push_back(sample("strided", {repeating({40}, t, 9).slice(0, 1, std::nullopt, 3)}, {0}));
    s.push_back(sample("fp32 weights", {repeating({30}, t, 9), randn({30})}, {0}));
    s.push_back(sample("fp64 weights, strided",
                       {repeating({30}, t, 9), randn({60}).to(DType::Float64).slice(0, 0, std::nullopt, 2)}, {3}));
    s.push_back(sample("integer weights", {repeating({20}, t, 5), repeating({20}, DType::Int32, 4)}, {0}));
    s.push_back(sample("empty", {repeating({0}, t)}, {0}));
    s.push_back(sample("empty, minlength", {repeating({0}, t)}, {4}));
    s.push_back(sample("large", {repeating({100000}, t, 100)}, {0}));
    return s;
  };
  info.op = [](const SampleInput& s) {
    std::optional<Tensor> weights;
    if (s.tensors.size() > 1) weights = s.tensors[1];
    return std::vector<Tensor>{bincount(s.tensors[0], weights, s.ints[0])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& x = in[0];
    int64_t length = s.ints[0];
    for (double v : x.data) length = std::max(length, static_cast<int64_t>(v) + 1);
    const bool weighted = in.size() > 1;
    const DType result = !weighted ? DType::Int64 : is_floating(in[1].dtype) ? in[1].dtype : DType::Float64;
    RefTensor out({length}, result);
    for (size_t i = 0; i < x.data.size(); ++i) out.data[static_cast<size_t>(x.data[i])] += weighted ? in[1].data[i] : 1;
    return std::vector<RefTensor>{out};
  };
  info.tolerance = [](DType) { return Tolerance{1e-5, 1e-6}; };
  info.error_inputs = [] {
    auto bad = [](std::string label, std::vector<Tensor> ts, int64_t minlength, const std::type_info& type,
                  std::vector<std::string> needles) {
      return ErrorInput{sample(std::move(label), std::move(ts), {minlength}), &type, std::move(needles)};
    };
    return std::vector<ErrorInput>{
        bad("negative value", {tensor({1, -2, 3})}, 0, typeid(ValueError), {"bincount", "-2"}),
        bad("2-d input", {repeating({2, 3}, DType::Int64)}, 0, typeid(ValueError), {"bincount", "(2, 3)"}),
        bad("float input", {randn({3})}, 0, typeid(TypeError), {"bincount", "fp32"}),
        bad("negative minlength", {tensor({1, 2})}, -1, typeid(ValueError), {"bincount", "-1"}),
        bad("weights of another length", {tensor({1, 2}), randn({3})}, 0, typeid(ValueError), {"bincount", "(3,)"})};
  };
  return info;
}

OpInfo histc_entry() {
  OpInfo info;
  info.name = "histc";
  info.family = OpFamily::Reduction;
  info.schemas = {"histc"};
  info.dtypes = kFloat;
  info.notes = "bins over [min, max], max in the last bin; outside and NaN not counted";
  // ints: {bins}; scalars: {min, max}.
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    s.push_back(sample("range given", {random_tensor({5, 7}, t)}, {10}, {-2, 2}));
    s.push_back(sample("the input's range", {random_tensor({5, 7}, t)}, {7}, {0, 0}));
    s.push_back(sample("transposed, narrow range", {random_tensor({7, 5}, t).t()}, {4}, {-1, 1}));
    s.push_back(sample("one value, range widened", {full({6}, 3.0, TensorOptions().dtype(t))}, {4}, {0, 0}));
    s.push_back(sample("empty", {random_tensor({0}, t)}, {5}, {0, 0}));
    // About 70 per bin: exact in fp16 and bf16 too, whose integers are exact to 2048 and 256.
    s.push_back(sample("large", {random_tensor({100, 70}, t)}, {100}, {-4, 4}));
    if (is_floating(t)) {
      s.push_back(sample("ends, outside and NaN",
                         {tensor(std::vector<double>{-1, 1, 0, 2, -3, kNaN, 0.5}, {7}, DType::Float64).to(t)}, {4},
                         {-1, 1}));
    }
    return s;
  };
  info.op = [](const SampleInput& s) {
    return std::vector<Tensor>{histc(s.tensors[0], s.ints[0], s.scalars[0], s.scalars[1])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& x = in[0];
    const int64_t bins = s.ints[0];
    double lo = s.scalars[0], hi = s.scalars[1];
    if (lo == hi && !x.data.empty()) {
      lo = *std::min_element(x.data.begin(), x.data.end());
      hi = *std::max_element(x.data.begin(), x.data.end());
    }
    if (lo == hi) lo -= 1, hi += 1;
    RefTensor out({bins}, x.dtype);
    for (double v : x.data) {
      if (!(v >= lo && v <= hi)) continue;
      const double position = std::floor((v - lo) * static_cast<double>(bins) / (hi - lo));
      out.data[static_cast<size_t>(std::clamp(position, 0.0, static_cast<double>(bins - 1)))] += 1;
    }
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    auto bad = [](std::string label, Tensor t, int64_t bins, double lo, double hi, const std::type_info& type,
                  std::vector<std::string> needles) {
      return ErrorInput{sample(std::move(label), {std::move(t)}, {bins}, {lo, hi}), &type, std::move(needles)};
    };
    return std::vector<ErrorInput>{
        bad("integer input", tensor({1, 2}), 4, 0, 3, typeid(TypeError), {"histc", "int64"}),
        bad("no bins", randn({3}), 0, 0, 1, typeid(ValueError), {"histc", "bins"}),
        bad("max below min", randn({3}), 4, 2, 1, typeid(ValueError), {"histc", "min"}),
        bad("infinite range", randn({3}), 4, -INFINITY, 1, typeid(ValueError), {"histc", "not finite"})};
  };
  return info;
}

}  // namespace

ANATOMY_REGISTER_OPS(counting) { return {unique_entry(), bincount_entry(), histc_entry()}; }

}  // namespace anatomy::testing
