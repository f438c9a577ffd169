// Op-table entry of scatter_reduce (functional and in-place): every reduce ("sum", "prod",
// "mean", "amax", "amin"), with and without include_self, over the scatter family's samples
// (index_samples.h: contiguous, transposed, offset, larger src, 3-D, int32 index, 0-dim, zero-size
// index; repeated indices throughout) and NaN for floating dtypes. The reference combines the
// values with plain loops in fp64, in index order.
#include <cmath>
#include <limits>

#include "anatomy/testing/index_samples.h"
#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

using namespace index_samples;

// A sample's reduce is ints[1] (an index into kReduces), include_self ints[2].
const char* const kReduces[] = {"sum", "prod", "mean", "amax", "amin"};

double combine(const std::string& reduce, double a, double b) {
  if (reduce == "sum" || reduce == "mean") return a + b;
  if (reduce == "prod") return a * b;
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return reduce == "amax" ? std::max(a, b) : std::min(a, b);
}

// PyTorch's scatter_reduce in fp64: each target element starts from self's value (include_self)
// or from the first value scattered to it, the values combine in index order, and a mean divides
// by the number of values (floor division for integer dtypes). Bool results are "any non-zero".
RefTensor ref_scatter_reduce(const RefTensor& self, int64_t dim, const RefTensor& index, const RefTensor& src,
                             const std::string& reduce, bool include_self) {
  RefTensor out = self;
  std::vector<int64_t> count(static_cast<size_t>(self.numel()), include_self ? 1 : 0);
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  dim = wrap(dim, nd);
  for (int64_t k = 0; k < index.numel(); ++k) {
    std::vector<int64_t> p(nd, 0);  // the index position of element k (row-major)
    int64_t rem = k;
    for (int64_t d = index.dim() - 1; d >= 0; --d) {
      p[d] = rem % index.shape[d];
      rem /= index.shape[d];
    }
    const double v = src.dim() == 0 ? src.data[0] : src.at(p);
    std::vector<int64_t> q = p;
    q[dim] = static_cast<int64_t>(index.data[k]);
    const int64_t at = self.dim() == 0 ? 0 : self.offset(q);
    double& target = out.data[at];
    target = count[at] == 0 ? v : combine(reduce, target, v);
    ++count[at];
  }
  const bool integral = !is_floating(self.dtype);
  for (int64_t i = 0; i < out.numel(); ++i) {
    double& x = out.data[i];
    if (reduce == "mean" && count[i] > 0) x = integral ? std::floor(x / count[i]) : x / count[i];
    if (self.dtype == DType::Bool) x = x != 0 ? 1 : 0;
  }
  return out;
}

std::vector<SampleInput> scatter_reduce_samples(DType t) {
  std::vector<SampleInput> base = scatter_samples(t, /*distinct=*/false);
  if (is_floating(t)) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    Tensor self = rnd({2, 3}, t), src = rnd({2, 3}, t);
    self.index_put_({indexing::TensorIndex(0), indexing::TensorIndex(1)}, Scalar(nan));
    src.index_put_({indexing::TensorIndex(1), indexing::TensorIndex(2)}, Scalar(nan));
    base.push_back(sample("NaN in self and src", {self, random_idx({2, 3}, 0, 3), src}, {1}));
  }
  std::vector<SampleInput> s;
  for (size_t k = 0; k < base.size(); ++k) {
    for (int64_t r = 0; r < 5; ++r) {
      if (t == DType::Bool && std::string(kReduces[r]) == "mean") continue;  // no division for bool
      SampleInput x = base[k];
      const bool include_self = (k + static_cast<size_t>(r)) % 2 == 0;
      x.ints = {x.ints[0], r, include_self ? 1 : 0};
      x.label += std::string(", ") + kReduces[r] + (include_self ? "" : ", include_self=false");
      s.push_back(std::move(x));
    }
  }
  return s;
}

std::vector<ErrorInput> scatter_reduce_errors() {
  std::vector<ErrorInput> e = scatter_errors("scatter_reduce", false);
  for (ErrorInput& x : scatter_errors("scatter_reduce", true)) e.push_back(x);
  for (ErrorInput& x : e) x.sample.ints = {x.sample.ints[0], 0, 1};
  SampleInput bad_reduce = sample("unknown reduce", {randn({3}), idx({0}), randn({1})}, {0, 5, 1});
  e.push_back(bad(bad_reduce, &typeid(ValueError), {"scatter_reduce_", "'max'", "amax"}));
  SampleInput bool_mean =
      sample("mean of bool", {zeros({3}, DType::Bool), idx({0}), ones({1}, DType::Bool)}, {0, 2, 1});
  e.push_back(bad(bool_mean, &typeid(TypeError), {"scatter_reduce_", "mean", "bool"}));
  return e;
}

// ints[1] == 5 stands for a reduce the operator does not know.
std::string reduce_of(const SampleInput& s) { return s.ints[1] == 5 ? "max" : kReduces[s.ints[1]]; }

OpInfo scatter_reduce_entry() {
  OpInfo info;
  info.name = "scatter_reduce";
  info.family = OpFamily::Indexing;
  info.schemas = {"scatter_reduce.two", "scatter_reduce_.two"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "sum, prod, mean, amax, amin; repeated indices combine in index order (deterministic)";
  info.samples = scatter_reduce_samples;
  info.op = [](const SampleInput& s) {
    const Tensor& self = s.tensors[0];
    if (is_inplace_error(s))
      return std::vector<Tensor>{self.scatter_reduce_(s.ints[0], s.tensors[1], s.tensors[2], reduce_of(s), s.ints[2])};
    return std::vector<Tensor>{self.scatter_reduce(s.ints[0], s.tensors[1], s.tensors[2], reduce_of(s), s.ints[2])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{ref_scatter_reduce(in[0], s.ints[0], in[1], in[2], reduce_of(s), s.ints[2] != 0)};
  };
  // bf16 rounds after every step; a product of four values in [-9, 10) reaches a few thousand.
  info.tolerance = [](DType t) { return t == DType::BFloat16 ? Tolerance{6e-2, 3e-2} : default_tolerance(t); };
  info.inplace = [](const SampleInput& s) {
    s.tensors[0].scatter_reduce_(s.ints[0], s.tensors[1], s.tensors[2], reduce_of(s), s.ints[2]);
  };
  info.error_inputs = scatter_reduce_errors;
  info.bench_input = [](int64_t n) {
    return sample("bench", {zeros({n / 64, 64}), random_idx({n / 64, 64}, 0, n / 64), randn({n / 64, 64})}, {0, 3, 1});
  };
  return info;
}

}  // namespace

ANATOMY_REGISTER_OPS(scatter_reduce) { return {scatter_reduce_entry()}; }

}  // namespace anatomy::testing
