// Op-table entries of the scans: cumsum, cumprod, cummax, cummin and logcumsumexp. The
// references walk each row with plain loops in fp64: sums and products, the running extremum by
// PyTorch's rule written out, and logcumsumexp as a running max with the sum of exponentials
// rescaled to it (not the kernels' pairwise logaddexp).
#include <cmath>
#include <limits>

#include "anatomy/testing/shape_samples.h"

namespace anatomy::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// About n fp32 elements as rows of 1024, scanned along dim 1 by the benchmarks.
Tensor rows_of_1024(int64_t n) { return randn({std::max<int64_t>(n / 1024, 1), std::min<int64_t>(n, 1024)}); }

// Walks every row of `input` along `dim` (a 0-dim input is one row of one element): fn(row, out)
// gets the row's values and fills `out` with one value per element for each of the results,
// which come back with `dtypes` and input's shape.
std::vector<RefTensor> ref_scan(
    const RefTensor& input, int64_t dim, const std::vector<DType>& dtypes,
    const std::function<void(const std::vector<double>&, std::vector<std::vector<double>>&)>& fn) {
  RefTensor a = at_least_1d(input);
  const int64_t d = wrap(dim, input.dim());
  std::vector<RefTensor> outs;
  for (DType t : dtypes) outs.emplace_back(a.shape, t);
  for_each_row(a.shape, d, [&](const std::vector<int64_t>& base) {
    std::vector<int64_t> idx = base;
    std::vector<double> row;
    for (int64_t i = 0; i < a.shape[d]; ++i) {
      idx[d] = i;
      row.push_back(a.at(idx));
    }
    std::vector<std::vector<double>> results(dtypes.size(), std::vector<double>(row.size()));
    fn(row, results);
    for (int64_t i = 0; i < a.shape[d]; ++i) {
      idx[d] = i;
      for (size_t k = 0; k < outs.size(); ++k) outs[k].at(idx) = results[k][i];
    }
  });
  for (RefTensor& o : outs) o.shape = input.shape;
  return outs;
}

// ints = {dim, dtype (-1: none)}.
OpInfo scan_entry(bool prod) {
  OpInfo info;
  info.name = prod ? "cumprod" : "cumsum";
  info.family = OpFamily::Indexing;
  info.schemas = {info.name, info.name + "_"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "integer and bool inputs give int64 (in place: self's dtype)";
  info.samples = [prod](DType t) {
    // Products stay small: |values| <= 3 over rows of at most 6.
    Domain d;
    if (prod) d.low = -1.5, d.high = 1.5, d.int_low = -3, d.int_high = 4;
    std::vector<SampleInput> s = {
        sample("contiguous", laid_out("contiguous", {4, 5}, t, d), {}, {1, -1}),
        sample("dim 0", laid_out("contiguous", {4, 5}, t, d), {}, {0, -1}),
        sample("transposed", laid_out("transposed", {5, 6}, t, d), {}, {-1, -1}),
        sample("offset", laid_out("offset", {3, 4}, t, d), {}, {0, -1}),
        sample("dtype float64", laid_out("contiguous", {4, 5}, t, d), {}, {1, static_cast<int64_t>(DType::Float64)}),
        sample("0-dim", random_tensor({}, t, d), {}, {0, -1}),
        sample("zero-size", random_tensor({0, 3}, t, d), {}, {0, -1}),
        sample("zero-size rows", random_tensor({3, 0}, t, d), {}, {1, -1}),
    };
    if (!prod) s.push_back(sample("large", random_tensor({64, 1024}, t, d), {}, {1, -1}));
    return s;
  };
  info.op = [prod](const SampleInput& s) {
    std::optional<DType> dtype;
    if (s.ints[1] >= 0) dtype = static_cast<DType>(s.ints[1]);
    return std::vector<Tensor>{prod ? s.tensors[0].cumprod(s.ints[0], dtype) : s.tensors[0].cumsum(s.ints[0], dtype)};
  };
  // Checked where the result has self's dtype (the floating samples without another dtype).
  info.inplace = [prod](const SampleInput& s) {
    std::optional<DType> dtype;
    if (s.ints[1] >= 0) dtype = static_cast<DType>(s.ints[1]);
    if (prod) {
      s.tensors[0].cumprod_(s.ints[0], dtype);
    } else {
      s.tensors[0].cumsum_(s.ints[0], dtype);
    }
  };
  info.reference = [prod](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& input = in[0];
    DType result = is_floating(input.dtype) ? input.dtype : DType::Int64;
    if (s.ints[1] >= 0) result = static_cast<DType>(s.ints[1]);
    return ref_scan(input, s.ints[0], {result}, [&](const std::vector<double>& row, auto& out) {
      double acc = prod ? 1.0 : 0.0;
      for (size_t i = 0; i < row.size(); ++i) {
        const double v = round_to(row[i], result);  // the input is cast to the result dtype first
        acc = prod ? acc * v : acc + v;
        out[0][i] = acc;
      }
    });
  };
  info.error_inputs = [name = info.name] {
    return std::vector<ErrorInput>{
        bad("dim out of range", randn({2, 3}), typeid(IndexError), {name, "2"}, {}, {2, -1}),
    };
  };
  if (!prod) info.bench_input = [](int64_t n) { return sample("", rows_of_1024(n), {}, {1, -1}); };
  return info;
}

// The samples of cummax, cummin and logcumsumexp: ints = {dim}. `d` bounds the random values.
std::vector<SampleInput> scan_samples(DType t, const Domain& d = {}) {
  std::vector<SampleInput> s = {
      sample("contiguous", laid_out("contiguous", {4, 5}, t, d), {}, {1}),
      sample("dim 0", laid_out("contiguous", {4, 5}, t, d), {}, {0}),
      sample("transposed", laid_out("transposed", {5, 6}, t, d), {}, {-1}),
      sample("offset", laid_out("offset", {3, 4}, t, d), {}, {0}),
      sample("3-d, middle dim", laid_out("transposed", {2, 3, 4}, t, d), {}, {1}),
      sample("0-dim", random_tensor({}, t, d), {}, {0}),
      sample("0-dim, dim -1", random_tensor({}, t, d), {}, {-1}),
      sample("zero-size", random_tensor({0, 3}, t, d), {}, {0}),
      sample("zero-size rows", random_tensor({3, 0}, t, d), {}, {1}),
  };
  if (is_floating(t)) {
    s.push_back(sample("NaN", with_nans(t), {}, {1}));
    s.push_back(sample("NaN, dim 0", with_nans(t).t(), {}, {0}));
    const Tensor inf =
        tensor(std::vector<double>{-kInf, -kInf, 0.5, -kInf, kInf, 1.0, -kInf, 2.0, kInf, kNaN, kInf, -3.0}, {3, 4},
               DType::Float64)
            .to(t);
    s.push_back(sample("infinities", inf, {}, {1}));
    s.push_back(sample("infinities, dim 0", inf, {}, {0}));
  }
  return s;
}

// ints = {dim}. Gradcheck skips the samples labelled "ties" (no derivative where two values are
// equal) and those with NaN or infinities; the random fp64 samples have no ties.
OpInfo cum_extremum_entry(bool is_max) {
  OpInfo info;
  info.name = is_max ? "cummax" : "cummin";
  info.family = OpFamily::Indexing;
  info.schemas = {info.name};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "ties: the latest index; from the first NaN on, NaN at the latest NaN's index";
  info.samples = [](DType t) {
    std::vector<SampleInput> s = scan_samples(t);
    s.push_back(sample("ties", with_ties({3, 9}, t), {}, {1}));
    s.push_back(sample("ties, dim 0", with_ties({9, 3}, t), {}, {0}));
    s.push_back(sample("large, ties", with_ties({64, 1024}, t), {}, {1}));
    return s;
  };
  info.op = [is_max](const SampleInput& s) {
    auto [values, indices] = is_max ? s.tensors[0].cummax(s.ints[0]) : s.tensors[0].cummin(s.ints[0]);
    return std::vector<Tensor>{values, indices};
  };
  info.reference = [is_max](const std::vector<RefTensor>& in, const SampleInput& s) {
    return ref_scan(in[0], s.ints[0], {in[0].dtype, DType::Int64}, [&](const std::vector<double>& row, auto& out) {
      double best = 0;
      size_t at = 0;
      for (size_t i = 0; i < row.size(); ++i) {
        const double x = row[i];
        if (i == 0 || std::isnan(x) || (!std::isnan(best) && (is_max ? x >= best : x <= best))) {
          best = x;
          at = i;
        }
        out[0][i] = best;
        out[1][i] = static_cast<double>(at);
      }
    });
  };
  info.error_inputs = [name = info.name] {
    return std::vector<ErrorInput>{
        bad("dim out of range", randn({2, 3}), typeid(IndexError), {name, "2"}, {}, {2}),
        bad("dim out of range, 0-dim", randn({}), typeid(IndexError), {name, "1"}, {}, {1}),
    };
  };
  info.bench_input = [](int64_t n) { return sample("", rows_of_1024(n), {}, {1}); };
  return info;
}

// log(sum of exp(row[j]) for j <= i) as max * sum of exp(row[j] - max), the sum rescaled
// whenever the max grows; -inf adds nothing, +inf and NaN stick.
void ref_logcumsumexp(const std::vector<double>& row, std::vector<double>& out) {
  bool nan = false, pos_inf = false;
  double m = -kInf, sum = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    const double x = row[i];
    if (std::isnan(x)) {
      nan = true;
    } else if (x == kInf) {
      pos_inf = true;
    } else if (x != -kInf) {
      if (x > m) {
        sum = sum * std::exp(m - x) + 1;
        m = x;
      } else {
        sum += std::exp(x - m);
      }
    }
    out[i] = nan ? kNaN : pos_inf ? kInf : m == -kInf ? -kInf : m + std::log(sum);
  }
}

// ints = {dim}.
OpInfo logcumsumexp_entry() {
  OpInfo info;
  info.name = "logcumsumexp";
  info.family = OpFamily::Indexing;
  info.schemas = {"logcumsumexp"};
  info.dtypes = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  info.differentiable = true;
  info.notes = "floating dtypes only; fp16/bf16 accumulate in fp32";
  info.samples = [](DType t) {
    std::vector<SampleInput> s = scan_samples(t);
    // exp of these overflows even fp64: only the stable form gets them right.
    const Tensor big =
        tensor(std::vector<double>{800, -1000, 1000, 1000, -5, 990, 1001, -1000}, {2, 4}, DType::Float64).to(t);
    s.push_back(sample("large magnitudes", big, {}, {1}));
    s.push_back(sample("large", random_tensor({64, 1024}, t), {}, {1}));
    return s;
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].logcumsumexp(s.ints[0])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return ref_scan(in[0], s.ints[0], {in[0].dtype},
                    [](const std::vector<double>& row, auto& out) { ref_logcumsumexp(row, out[0]); });
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("dim out of range", randn({2, 3}), typeid(IndexError), {"logcumsumexp", "-3"}, {}, {-3}),
        bad("int64 input", tensor({1, 2, 3}), typeid(TypeError), {"logcumsumexp", "int64"}, {}, {0}),
        bad("bool input", ones({2}, DType::Bool), typeid(TypeError), {"logcumsumexp", "bool"}, {}, {0}),
    };
  };
  info.bench_input = [](int64_t n) { return sample("", rows_of_1024(n), {}, {1}); };
  return info;
}

}  // namespace

ANATOMY_REGISTER_OPS(scans) {
  return {scan_entry(false), scan_entry(true), cum_extremum_entry(true), cum_extremum_entry(false),
          logcumsumexp_entry()};
}

}  // namespace anatomy::testing
