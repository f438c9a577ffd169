// Op-table entries: joining (cat, stack), reading by index (index_select, gather, take,
// embedding, advanced indexing), writing by index (scatter, scatter_add, index_put) and masking
// (masked_fill, masked_select, nonzero), and by index along one dim (index_fill, index_copy,
// index_add, masked_scatter, take_along_dim). The references move values with plain loops over
// RefTensor. Samples cover contiguous, transposed (non-contiguous), sliced (offset) and
// non-contiguous index tensors, 0-dim and zero-size inputs, negative indices where they wrap and
// repeated indices where they accumulate. The in-place forms' bad inputs run on the sample's own
// tensor (labels starting "in-place"), so the driver proves a failed call writes nothing.
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "anatomy/testing/index_samples.h"
#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

using namespace index_samples;

// ---- cat and stack ----

RefTensor ref_cat(const std::vector<RefTensor>& in, int64_t dim, DType result) {
  const RefTensor* first = nullptr;
  for (const RefTensor& t : in)
    if (!(t.dim() == 1 && t.shape[0] == 0) && !first) first = &t;
  if (!first) return RefTensor({0}, result);
  dim = wrap(dim, first->dim());
  Shape shape = first->shape;
  shape[dim] = 0;
  for (const RefTensor& t : in)
    if (!(t.dim() == 1 && t.shape[0] == 0)) shape[dim] += t.shape[dim];
  RefTensor out(shape, result);
  int64_t at = 0;
  for (const RefTensor& t : in) {
    if (t.dim() == 1 && t.shape[0] == 0) continue;
    for_each_index(t.shape, [&](const std::vector<int64_t>& i) {
      std::vector<int64_t> o = i;
      o[dim] += at;
      out.at(o) = t.at(i);
    });
    at += t.shape[dim];
  }
  return out;
}

OpInfo cat_entry() {
  OpInfo info;
  info.name = "cat";
  info.family = OpFamily::Indexing;
  info.schemas = {"cat"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    s.push_back(sample("contiguous", {rnd({2, 3}, t), rnd({4, 3}, t)}, {0}));
    s.push_back(sample("transposed, dim 1", {transposed({2, 3}, t), rnd({2, 4}, t)}, {1}));
    s.push_back(sample("offset, dim -1", {sliced({2, 3}, t), rnd({2, 1}, t), transposed({2, 2}, t)}, {-1}));
    s.push_back(sample("3-D, middle dim", {rnd({2, 1, 3}, t), rnd({2, 4, 3}, t)}, {1}));
    s.push_back(sample("one input", {rnd({3, 2}, t)}, {0}));
    s.push_back(sample("legacy empty skipped", {rnd({0}, t), rnd({2, 3}, t), rnd({0}, t)}, {1}));
    s.push_back(sample("only legacy empties", {rnd({0}, t), rnd({0}, t)}, {0}));
    s.push_back(sample("zero-size", {rnd({0, 3}, t), rnd({2, 3}, t)}, {0}));
    s.push_back(sample("expanded", {rnd({1, 3}, t).expand({2, 3}), rnd({1, 3}, t)}, {0}));
    s.push_back(sample("mixed dtypes", {rnd({2, 2}, t), rnd({1, 2}, DType::Int32), rnd({1, 2}, DType::Float16)}, {0}));
    return s;
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{cat(s.tensors, s.ints[0])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{ref_cat(in, s.ints[0], promoted_dtype(s.tensors))};
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    e.push_back(bad(sample("sizes differ outside dim", {randn({2, 3}), randn({2, 4})}, {0}), &typeid(ValueError),
                    {"cat", "[2, 3]", "[2, 4]"}));
    e.push_back(bad(sample("dims differ", {randn({2, 3}), randn({3})}, {0}), &typeid(ValueError), {"cat", "[3]"}));
    e.push_back(
        bad(sample("dim out of range", {randn({2, 3}), randn({2, 3})}, {2}), &typeid(IndexError), {"cat", "2"}));
    e.push_back(
        bad(sample("0-dim input", {randn({2}), scalar_tensor(1.0)}, {0}), &typeid(ValueError), {"cat", "0-dim"}));
    e.push_back(bad(sample("no tensors", {}, {0}), &typeid(ValueError), {"cat", "non-empty"}));
    return e;
  };
  info.bench_input = [](int64_t n) { return sample("bench", {randn({n / 2}), randn({n / 2})}, {0}); };
  return info;
}

OpInfo stack_entry() {
  OpInfo info;
  info.name = "stack";
  info.family = OpFamily::Indexing;
  info.schemas = {"stack"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    s.push_back(sample("contiguous, dim 0", {rnd({2, 3}, t), rnd({2, 3}, t)}, {0}));
    s.push_back(sample("transposed, dim 1", {transposed({2, 3}, t), rnd({2, 3}, t), sliced({2, 3}, t)}, {1}));
    s.push_back(sample("last dim", {rnd({2, 3}, t), transposed({2, 3}, t)}, {2}));
    s.push_back(sample("dim -1", {rnd({4}, t), rnd({4}, t)}, {-1}));
    s.push_back(sample("0-dim inputs", {rnd({}, t), rnd({}, t), rnd({}, t)}, {0}));
    s.push_back(sample("zero-size", {rnd({0, 2}, t), rnd({0, 2}, t)}, {1}));
    s.push_back(sample("mixed dtypes", {rnd({3}, t), rnd({3}, DType::Float32)}, {0}));
    return s;
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{stack(s.tensors, s.ints[0])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const int64_t dim = wrap(s.ints[0], in[0].dim() + 1);
    Shape shape = in[0].shape;
    shape.insert(shape.begin() + dim, static_cast<int64_t>(in.size()));
    RefTensor out(shape, promoted_dtype(s.tensors));
    for (size_t k = 0; k < in.size(); ++k) {
      for_each_index(in[k].shape, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> o = i;
        o.insert(o.begin() + dim, static_cast<int64_t>(k));
        out.at(o) = in[k].at(i);
      });
    }
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    e.push_back(bad(sample("shapes differ", {randn({2, 3}), randn({3, 2})}, {0}), &typeid(ValueError),
                    {"stack", "[2, 3]", "[3, 2]"}));
    e.push_back(bad(sample("dim out of range", {randn({2}), randn({2})}, {3}), &typeid(IndexError), {"stack", "3"}));
    e.push_back(bad(sample("no tensors", {}, {0}), &typeid(ValueError), {"stack"}));
    return e;
  };
  return info;
}

// ---- index_select, gather, take, embedding ----

OpInfo index_select_entry() {
  OpInfo info;
  info.name = "index_select";
  info.family = OpFamily::Indexing;
  info.schemas = {"index_select"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "negative indices count from the end";
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    s.push_back(sample("contiguous, repeated and negative", {rnd({4, 5}, t), idx({3, 0, 3, -1, -4})}, {0}));
    s.push_back(sample("transposed, dim 1", {transposed({4, 5}, t), idx({4, 1})}, {1}));
    s.push_back(sample("offset self, strided index", {sliced({3, 6}, t), strided_idx({5, 2, 0})}, {-1}));
    s.push_back(sample("3-D, middle dim", {rnd({2, 4, 3}, t), idx({2, 2, 1})}, {1}));
    s.push_back(sample("0-dim index", {rnd({4, 5}, t), idx({2})}, {1}));
    s.push_back(sample("int32 index", {rnd({4, 5}, t), idx({1, 3}).to(DType::Int32)}, {0}));
    s.push_back(sample("empty index", {rnd({4, 5}, t), idx({}, {0})}, {0}));
    s.push_back(sample("zero-size self", {rnd({0, 3}, t), idx({2, 0})}, {1}));
    s.push_back(sample("0-dim self", {rnd({}, t), idx({0}, {1})}, {0}));
    return s;
  };
  info.op = [](const SampleInput& s) {
    return std::vector<Tensor>{index_select(s.tensors[0], s.ints[0], s.tensors[1])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& self = in[0];
    const RefTensor& index = in[1];
    if (self.dim() == 0) {
      RefTensor out({}, self.dtype);
      out.data[0] = self.data[0];
      return std::vector<RefTensor>{out};
    }
    const int64_t dim = wrap(s.ints[0], self.dim());
    Shape shape = self.shape;
    shape[dim] = index.numel();
    RefTensor out(shape, self.dtype);
    for_each_index(shape, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i = o;
      i[dim] = wrap_index(index.data[o[dim]], self.shape[dim]);
      out.at(o) = self.at(i);
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    e.push_back(bad(sample("index out of range", {randn({4, 5}), idx({1, 5})}, {1}), &typeid(IndexError),
                    {"index_select", "5"}));
    e.push_back(bad(sample("negative index out of range", {randn({4, 5}), idx({-5})}, {0}), &typeid(IndexError),
                    {"index_select", "-5"}));
    e.push_back(
        bad(sample("float index", {randn({4, 5}), randn({2})}, {0}), &typeid(TypeError), {"index_select", "fp32"}));
    e.push_back(
        bad(sample("dim out of range", {randn({4, 5}), idx({0})}, {2}), &typeid(IndexError), {"index_select", "2"}));
    e.push_back(bad(sample("2-D index", {randn({4, 5}), idx({0, 1, 2, 3}, {2, 2})}, {0}), &typeid(ValueError),
                    {"index_select", "[2, 2]"}));
    return e;
  };
  info.bench_input = [](int64_t n) {
    return sample("bench", {randn({n / 64, 64}), random_idx({n / 64}, 0, n / 64)}, {0});
  };
  return info;
}

// out[p] = self[p with p[dim] = index[p]] (0-dim tensors as one element).
RefTensor ref_gather(const RefTensor& self, const RefTensor& index, int64_t dim) {
  RefTensor out(index.shape, self.dtype);
  if (self.dim() == 0) {
    for (double& v : out.data) v = self.data[0];
    return out;
  }
  dim = wrap(dim, self.dim());
  for_each_index(index.shape, [&](const std::vector<int64_t>& p) {
    std::vector<int64_t> i = p;
    i[dim] = static_cast<int64_t>(index.at(p));
    out.at(p) = self.at(i);
  });
  return out;
}

OpInfo gather_entry() {
  OpInfo info;
  info.name = "gather";
  info.family = OpFamily::Indexing;
  info.schemas = {"gather"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    s.push_back(sample("contiguous, dim 1", {rnd({3, 4}, t), random_idx({3, 6}, 0, 4)}, {1}));
    s.push_back(sample("smaller index, dim 0", {rnd({3, 4}, t), random_idx({2, 2}, 0, 3)}, {0}));
    s.push_back(sample("transposed self, dim -1", {transposed({3, 4}, t), random_idx({3, 4}, 0, 4)}, {-1}));
    s.push_back(sample("offset self, transposed index", {sliced({3, 4}, t), random_idx({2, 3}, 0, 3).t()}, {0}));
    s.push_back(sample("3-D", {rnd({2, 3, 4}, t), random_idx({2, 2, 4}, 0, 3)}, {1}));
    s.push_back(sample("int32 index", {rnd({3, 4}, t), random_idx({3, 2}, 0, 4).to(DType::Int32)}, {1}));
    s.push_back(sample("0-dim", {rnd({}, t), idx({0})}, {0}));
    s.push_back(sample("zero-size index", {rnd({3, 4}, t), idx({}, {3, 0})}, {1}));
    return s;
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{gather(s.tensors[0], s.ints[0], s.tensors[1])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{ref_gather(in[0], in[1], s.ints[0])};
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    e.push_back(bad(sample("index out of range", {randn({3, 4}), idx({0, 4}, {1, 2})}, {1}), &typeid(IndexError),
                    {"gather", "4"}));
    e.push_back(
        bad(sample("negative index", {randn({3, 4}), idx({-1}, {1, 1})}, {1}), &typeid(IndexError), {"gather", "-1"}));
    e.push_back(
        bad(sample("float index", {randn({3, 4}), randn({1, 1})}, {1}), &typeid(TypeError), {"gather", "fp32"}));
    e.push_back(bad(sample("index larger than self outside dim", {randn({3, 4}), idx({0, 0, 0, 0}, {4, 1})}, {1}),
                    &typeid(ValueError), {"gather", "[4, 1]", "[3, 4]"}));
    e.push_back(bad(sample("dims differ", {randn({3, 4}), idx({0, 1})}, {1}), &typeid(ValueError), {"gather"}));
    e.push_back(bad(sample("dim out of range", {randn({3, 4}), idx({0}, {1, 1})}, {-3}), &typeid(IndexError),
                    {"gather", "-3"}));
    return e;
  };
  info.bench_input = [](int64_t n) {
    return sample("bench", {randn({n / 64, 64}), random_idx({n / 64, 64}, 0, 64)}, {1});
  };
  return info;
}

OpInfo take_entry() {
  OpInfo info;
  info.name = "take";
  info.family = OpFamily::Indexing;
  info.schemas = {"take"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "indexes the row-major flattened self; negative indices count from the end";
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    s.push_back(sample("contiguous, negative", {rnd({3, 4}, t), idx({0, 11, -1, -12, 5, 5}, {2, 3})}));
    s.push_back(sample("transposed self", {transposed({3, 4}, t), random_idx({7}, -12, 12)}));
    s.push_back(sample("offset self, strided index", {sliced({2, 3}, t), strided_idx({5, 0, 3})}));
    s.push_back(sample("expanded self", {rnd({1, 3}, t).expand({2, 3}), idx({4, 1})}));
    s.push_back(sample("0-dim index", {rnd({3, 4}, t), idx({7})}));
    s.push_back(sample("empty index", {rnd({3, 4}, t), idx({}, {0, 2})}));
    s.push_back(sample("0-dim self", {rnd({}, t), idx({0, -1})}));
    return s;
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{take(s.tensors[0], s.tensors[1])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    RefTensor out(in[1].shape, in[0].dtype);
    for (int64_t i = 0; i < out.numel(); ++i) out.data[i] = in[0].data[wrap_index(in[1].data[i], in[0].numel())];
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    e.push_back(bad(sample("index out of range", {randn({3, 4}), idx({12})}), &typeid(IndexError), {"take", "12"}));
    e.push_back(
        bad(sample("negative out of range", {randn({3, 4}), idx({-13})}), &typeid(IndexError), {"take", "-13"}));
    e.push_back(bad(sample("empty self", {randn({0}), idx({0})}), &typeid(IndexError), {"take", "0"}));
    e.push_back(bad(sample("float index", {randn({3, 4}), randn({1})}), &typeid(TypeError), {"take", "fp32"}));
    return e;
  };
  return info;
}

OpInfo embedding_entry() {
  OpInfo info;
  info.name = "embedding";
  info.family = OpFamily::Indexing;
  info.schemas = {"embedding"};
  info.dtypes = {DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  info.differentiable = true;
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    s.push_back(sample("contiguous, repeated rows", {rnd({5, 3}, t), idx({0, 4, 4, 2, 1, 0}, {2, 3})}));
    s.push_back(sample("transposed weight", {transposed({5, 3}, t), idx({3, 1, 3})}));
    s.push_back(sample("offset weight, strided indices", {sliced({5, 3}, t), strided_idx({4, 0})}));
    s.push_back(sample("int32 indices", {rnd({5, 3}, t), idx({2, 3}).to(DType::Int32)}));
    s.push_back(sample("0-dim indices", {rnd({5, 3}, t), idx({4})}));
    s.push_back(sample("empty indices", {rnd({5, 3}, t), idx({}, {0})}));
    return s;
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{embedding(s.tensors[0], s.tensors[1])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    const RefTensor& w = in[0];
    Shape shape = in[1].shape;
    shape.push_back(w.shape[1]);
    RefTensor out(shape, w.dtype);
    for (int64_t i = 0; i < in[1].numel(); ++i)
      for (int64_t j = 0; j < w.shape[1]; ++j)
        out.data[i * w.shape[1] + j] = w.at({static_cast<int64_t>(in[1].data[i]), j});
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    e.push_back(bad(sample("index out of range", {randn({5, 3}), idx({5})}), &typeid(IndexError), {"embedding", "5"}));
    e.push_back(bad(sample("negative index", {randn({5, 3}), idx({-1})}), &typeid(IndexError), {"embedding", "-1"}));
    e.push_back(bad(sample("1-D weight", {randn({5}), idx({0})}), &typeid(ValueError), {"embedding", "[5]"}));
    e.push_back(bad(sample("float indices", {randn({5, 3}), randn({2})}), &typeid(TypeError), {"embedding", "fp32"}));
    return e;
  };
  info.bench_input = [](int64_t n) { return sample("bench", {randn({1000, 64}), random_idx({n / 64}, 0, 1000)}); };
  return info;
}

// ---- scatter, scatter_add ----

// self with src's values written (accumulate: added) at index along dim; 0-dim as one element.
RefTensor ref_scatter(const RefTensor& self, int64_t dim, const RefTensor& index, const RefTensor* src, double value,
                      bool accumulate) {
  RefTensor out = self;
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  dim = wrap(dim, nd);
  for (int64_t k = 0; k < index.numel(); ++k) {
    // The index position of element k (row-major), as a position of src and of self.
    std::vector<int64_t> p(nd, 0);
    int64_t rem = k;
    for (int64_t d = index.dim() - 1; d >= 0; --d) {
      p[d] = rem % index.shape[d];
      rem /= index.shape[d];
    }
    const double v = !src ? value : src->dim() == 0 ? src->data[0] : src->at(p);
    std::vector<int64_t> q = p;
    q[dim] = static_cast<int64_t>(index.data[k]);
    double& target = self.dim() == 0 ? out.data[0] : out.at(q);
    target = accumulate ? target + v : v;
  }
  return out;
}

OpInfo scatter_entry() {
  OpInfo info;
  info.name = "scatter";
  info.family = OpFamily::Indexing;
  info.schemas = {"scatter.src", "scatter_.src"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "indices must be distinct along dim for a defined result";
  info.samples = [](DType t) { return scatter_samples(t, /*distinct=*/true); };
  info.op = [](const SampleInput& s) {
    if (is_inplace_error(s)) return std::vector<Tensor>{s.tensors[0].scatter_(s.ints[0], s.tensors[1], s.tensors[2])};
    return std::vector<Tensor>{scatter(s.tensors[0], s.ints[0], s.tensors[1], s.tensors[2])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{ref_scatter(in[0], s.ints[0], in[1], &in[2], 0, false)};
  };
  info.inplace = [](const SampleInput& s) { s.tensors[0].scatter_(s.ints[0], s.tensors[1], s.tensors[2]); };
  info.error_inputs = [] {
    std::vector<ErrorInput> e = scatter_errors("scatter", false);
    for (ErrorInput& x : scatter_errors("scatter", true)) e.push_back(x);
    return e;
  };
  return info;
}

OpInfo scatter_value_entry() {
  OpInfo info;
  info.name = "scatter_value";
  info.family = OpFamily::Indexing;
  info.schemas = {"scatter.value"};
  info.dtypes = kAll;
  info.notes = "scatter with a scalar value";
  info.samples = [](DType t) {
    std::vector<SampleInput> s = scatter_samples(t, /*distinct=*/false);
    for (SampleInput& x : s) {
      x.tensors.pop_back();
      x.scalars = {3};
    }
    return s;
  };
  info.op = [](const SampleInput& s) {
    return std::vector<Tensor>{scatter(s.tensors[0], s.ints[0], s.tensors[1], Scalar(s.scalars[0]))};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{ref_scatter(in[0], s.ints[0], in[1], nullptr, s.scalars[0], false)};
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    SampleInput big = sample("value out of range", {zeros({3}, DType::Int8), idx({0})}, {0}, {300});
    e.push_back(bad(big, &typeid(ValueError), {"scatter_", "300"}));
    e.push_back(
        bad(sample("index out of range", {randn({3}), idx({3})}, {0}, {1}), &typeid(IndexError), {"scatter_", "3"}));
    return e;
  };
  return info;
}

OpInfo scatter_add_entry() {
  OpInfo info;
  info.name = "scatter_add";
  info.family = OpFamily::Indexing;
  info.schemas = {"scatter_add", "scatter_add_"};
  info.dtypes = kSome;
  info.differentiable = true;
  info.notes = "repeated indices add up, in index order (deterministic)";
  info.samples = [](DType t) { return scatter_samples(t, /*distinct=*/false); };
  info.op = [](const SampleInput& s) {
    if (is_inplace_error(s))
      return std::vector<Tensor>{s.tensors[0].scatter_add_(s.ints[0], s.tensors[1], s.tensors[2])};
    return std::vector<Tensor>{scatter_add(s.tensors[0], s.ints[0], s.tensors[1], s.tensors[2])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{ref_scatter(in[0], s.ints[0], in[1], &in[2], 0, true)};
  };
  // bf16 rounds after every addition.
  info.tolerance = [](DType t) { return t == DType::BFloat16 ? Tolerance{6e-2, 2e-2} : default_tolerance(t); };
  info.inplace = [](const SampleInput& s) { s.tensors[0].scatter_add_(s.ints[0], s.tensors[1], s.tensors[2]); };
  info.error_inputs = [] {
    std::vector<ErrorInput> e = scatter_errors("scatter_add", false);
    for (ErrorInput& x : scatter_errors("scatter_add", true)) e.push_back(x);
    return e;
  };
  info.bench_input = [](int64_t n) {
    return sample("bench", {zeros({n / 64, 64}), random_idx({n / 64, 64}, 0, n / 64), randn({n / 64, 64})}, {0});
  };
  return info;
}

// ---- masking ----

OpInfo masked_fill_entry() {
  OpInfo info;
  info.name = "masked_fill";
  info.family = OpFamily::Indexing;
  info.schemas = {"masked_fill.Scalar", "masked_fill_.Scalar"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "self and mask broadcast together (in place: the mask broadcasts to self)";
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    const DType b = DType::Bool;
    s.push_back(sample("contiguous", {rnd({3, 4}, t), rnd({3, 4}, b)}, {}, {3}));
    s.push_back(sample("broadcast mask", {rnd({3, 4}, t), rnd({4}, b)}, {}, {3}));
    s.push_back(sample("transposed self, transposed mask", {transposed({3, 4}, t), transposed({3, 4}, b)}, {}, {3}));
    s.push_back(sample("offset self", {sliced({3, 4}, t), rnd({3, 1}, b)}, {}, {3}));
    s.push_back(sample("mask larger than self", {rnd({4}, t), rnd({2, 4}, b)}, {}, {3}));
    s.push_back(sample("0-dim", {rnd({}, t), tensor({true}).view({})}, {}, {3}));
    s.push_back(sample("zero-size", {rnd({0, 4}, t), rnd({0, 4}, b)}, {}, {3}));
    if (is_floating(t)) s.push_back(sample("fractional value", {rnd({3, 4}, t), rnd({3, 4}, b)}, {}, {-1.5}));
    return s;
  };
  info.op = [](const SampleInput& s) {
    if (is_inplace_error(s)) return std::vector<Tensor>{s.tensors[0].masked_fill_(s.tensors[1], s.scalars[0])};
    return std::vector<Tensor>{masked_fill(s.tensors[0], s.tensors[1], s.scalars[0])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const Shape shape = broadcast_shape({in[0], in[1]});
    RefTensor out =
        map_binary(in[0], in[1], in[0].dtype, [&](double v, double m) { return m != 0 ? s.scalars[0] : v; });
    (void)shape;
    return std::vector<RefTensor>{out};
  };
  info.inplace = [](const SampleInput& s) { s.tensors[0].masked_fill_(s.tensors[1], s.scalars[0]); };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    e.push_back(bad(sample("in-place: mask not bool", {randn({3}), ones({3}, DType::UInt8)}, {}, {1}),
                    &typeid(TypeError), {"masked_fill_", "uint8"}));
    e.push_back(
        bad(sample("in-place: mask does not broadcast to self", {randn({4}), ones({2, 4}, DType::Bool)}, {}, {1}),
            &typeid(ValueError), {"masked_fill_", "[2, 4]", "[4]"}));
    e.push_back(
        bad(sample("in-place: value out of range", {zeros({3}, DType::Int8), ones({3}, DType::Bool)}, {}, {300}),
            &typeid(ValueError), {"masked_fill_", "300"}));
    e.push_back(bad(sample("shapes do not broadcast", {randn({3}), ones({4}, DType::Bool)}, {}, {1}),
                    &typeid(ValueError), {"masked_fill", "[3]", "[4]"}));
    e.push_back(
        bad(sample("mask not bool", {randn({3}), ones({3})}, {}, {1}), &typeid(TypeError), {"masked_fill", "fp32"}));
    return e;
  };
  info.bench_input = [](int64_t n) { return sample("bench", {randn({n}), randint(0, 2, {n}, DType::Bool)}, {}, {0}); };
  return info;
}

OpInfo masked_select_entry() {
  OpInfo info;
  info.name = "masked_select";
  info.family = OpFamily::Indexing;
  info.schemas = {"masked_select"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "1-D result, row-major order of the broadcast self and mask";
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    const DType b = DType::Bool;
    s.push_back(sample("contiguous", {rnd({3, 4}, t), rnd({3, 4}, b)}));
    s.push_back(sample("broadcast mask", {rnd({3, 4}, t), rnd({4}, b)}));
    s.push_back(sample("broadcast self", {rnd({4}, t), rnd({2, 4}, b)}));
    s.push_back(sample("transposed self, offset mask", {transposed({3, 4}, t), sliced({3, 4}, b)}));
    s.push_back(sample("all false", {rnd({3, 4}, t), zeros({3, 4}, b)}));
    s.push_back(sample("0-dim", {rnd({}, t), tensor({true}).view({})}));
    s.push_back(sample("zero-size", {rnd({0, 4}, t), rnd({0, 4}, b)}));
    return s;
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{masked_select(s.tensors[0], s.tensors[1])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    // Broadcast both (a placeholder value marks the selected positions), then collect.
    const RefTensor picked =
        map_binary(in[0], in[1], DType::Float64, [](double v, double m) { return m != 0 ? v : NAN; });
    const RefTensor mask = map_binary(in[0], in[1], DType::Float64, [](double, double m) { return m; });
    std::vector<double> v;
    for (int64_t i = 0; i < mask.numel(); ++i)
      if (mask.data[i] != 0) v.push_back(picked.data[i]);
    RefTensor out({static_cast<int64_t>(v.size())}, in[0].dtype);
    out.data = v;
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    e.push_back(bad(sample("mask not bool", {randn({3}), ones({3})}), &typeid(TypeError), {"masked_select", "fp32"}));
    e.push_back(bad(sample("shapes do not broadcast", {randn({3}), ones({4}, DType::Bool)}), &typeid(ValueError),
                    {"masked_select", "[3]", "[4]"}));
    return e;
  };
  return info;
}

OpInfo nonzero_entry() {
  OpInfo info;
  info.name = "nonzero";
  info.family = OpFamily::Indexing;
  info.schemas = {"nonzero"};
  info.dtypes = kAll;
  info.notes = "int64 [count, ndim], row-major order";
  info.samples = [](DType t) {
    // Values in {-1, 0, 1}: about a third are zero.
    auto sparse = [t](Shape shape) { return random_idx(std::move(shape), -1, 2).to(t); };
    std::vector<SampleInput> s;
    s.push_back(sample("contiguous", {sparse({3, 4})}));
    s.push_back(sample("transposed", {sparse({4, 3}).t()}));
    s.push_back(sample("offset 3-D", {sparse({3, 2, 3}).narrow(0, 1, 2)}));
    s.push_back(sample("1-D", {sparse({7})}));
    s.push_back(sample("0-dim", {sparse({})}));
    s.push_back(sample("zero-size", {sparse({0, 3})}));
    if (is_floating(t)) s.push_back(sample("nan and -0", {tensor({static_cast<double>(NAN), -0.0, 0.0, 1.0}).to(t)}));
    return s;
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{nonzero(s.tensors[0])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    const RefTensor& x = in[0];
    std::vector<std::vector<int64_t>> found;
    for_each_index(x.shape, [&](const std::vector<int64_t>& i) {
      if (x.at(i) != 0) found.push_back(i);  // NaN != 0 counts, as in PyTorch
    });
    RefTensor out({static_cast<int64_t>(found.size()), x.dim()}, DType::Int64);
    for (size_t r = 0; r < found.size(); ++r)
      for (int64_t d = 0; d < x.dim(); ++d) out.data[r * x.dim() + d] = static_cast<double>(found[r][d]);
    return std::vector<RefTensor>{out};
  };
  return info;
}

// ---- advanced indexing ----

// NumPy indexing over RefTensors: entries are the index list (undefined = full slice), bool
// masks expand to their nonzero positions; the result follows NumPy's placement rule. Calls
// fn(result position, self position) for every element of the result; returns the result shape.
Shape for_each_indexed(const RefTensor& self, const std::vector<RefTensor>& entries, const std::vector<DType>& dtypes,
                       const std::function<void(const std::vector<int64_t>&, const std::vector<int64_t>&)>& fn) {
  // Per dim of self: a list of (already flattened) index values with its shape, or none.
  std::vector<std::optional<std::pair<Shape, std::vector<int64_t>>>> per_dim;
  for (size_t k = 0; k < entries.size(); ++k) {
    const RefTensor& e = entries[k];
    if (!e.defined) {
      per_dim.push_back(std::nullopt);
    } else if (dtypes[k] == DType::Bool) {
      std::vector<std::vector<int64_t>> pos;
      for_each_index(e.shape, [&](const std::vector<int64_t>& i) {
        if (e.at(i) != 0) pos.push_back(i);
      });
      for (int64_t j = 0; j < e.dim(); ++j) {
        std::vector<int64_t> v;
        for (const auto& p : pos) v.push_back(p[j]);
        per_dim.push_back(std::make_pair(Shape{static_cast<int64_t>(pos.size())}, v));
      }
    } else {
      std::vector<int64_t> v;
      for (double x : e.data) v.push_back(static_cast<int64_t>(x));
      per_dim.push_back(std::make_pair(e.shape, v));
    }
  }
  while (static_cast<int64_t>(per_dim.size()) < self.dim()) per_dim.push_back(std::nullopt);
  std::vector<RefTensor> shapes;
  std::vector<int64_t> indexed;
  for (size_t d = 0; d < per_dim.size(); ++d) {
    if (!per_dim[d]) continue;
    indexed.push_back(static_cast<int64_t>(d));
    shapes.push_back(RefTensor(per_dim[d]->first, DType::Int64));
  }
  const Shape block = shapes.empty() ? Shape{} : broadcast_shape(shapes);
  bool adjacent = true;
  for (size_t i = 1; i < indexed.size(); ++i) adjacent = adjacent && indexed[i] == indexed[i - 1] + 1;
  const int64_t at = adjacent && !indexed.empty() ? indexed[0] : 0;
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!per_dim[d]) rest.push_back(d);
  Shape result;
  for (int64_t r = 0; r < at; ++r) result.push_back(self.shape[rest[r]]);
  result.insert(result.end(), block.begin(), block.end());
  for (size_t r = at; r < rest.size(); ++r) result.push_back(self.shape[rest[r]]);
  const int64_t nb = static_cast<int64_t>(block.size());
  for_each_index(result, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> b(o.begin() + at, o.begin() + at + nb);
    std::vector<int64_t> src(self.dim(), 0);
    int64_t r = 0;
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!per_dim[d]) {
        src[d] = r < at ? o[r] : o[r + nb];
        ++r;
        continue;
      }
      // The entry's value at the block position, broadcast (right-aligned, size 1 repeats).
      const Shape& es = per_dim[d]->first;
      int64_t flat = 0;
      for (size_t j = 0; j < es.size(); ++j) {
        const int64_t bj = b[nb - es.size() + j];
        flat = flat * es[j] + (es[j] == 1 ? 0 : bj);
      }
      const int64_t v = per_dim[d]->second[flat];
      src[d] = v < 0 ? v + self.shape[d] : v;
    }
    fn(o, src);
  });
  return result;
}

std::vector<DType> index_dtypes(const SampleInput& s) {
  std::vector<DType> t;
  for (size_t k = 1; k < s.tensors.size(); ++k)
    t.push_back(s.tensors[k].defined() ? s.tensors[k].dtype() : DType::Int64);
  return t;
}

std::vector<SampleInput> index_samples(DType t) {
  std::vector<SampleInput> s;
  const Tensor none;
  s.push_back(sample("one int tensor, repeated and negative", {rnd({4, 5, 3}, t), idx({3, 0, -1, 3})}));
  s.push_back(sample("slice then 2-D index", {rnd({4, 5, 3}, t), none, idx({0, 4, -5, 2}, {2, 2})}));
  s.push_back(sample("adjacent broadcast pair", {rnd({4, 5, 3}, t), none, idx({1, 2, 4}, {3, 1}), idx({0, 2})}));
  s.push_back(sample("separated pair goes first", {rnd({4, 5, 3}, t), idx({0, 3}), none, idx({2, -1})}));
  s.push_back(sample("transposed self, strided index", {transposed({4, 5}, t), strided_idx({3, 1, -1})}));
  s.push_back(sample("offset self, int32 index", {sliced({3, 4}, t), none, idx({3, 0}).to(DType::Int32)}));
  s.push_back(sample("bool mask on dim 0", {rnd({4, 3}, t), tensor({true, false, true, true})}));
  s.push_back(sample("2-D bool mask", {rnd({3, 4}, t), rnd({3, 4}, DType::Bool)}));
  s.push_back(sample("slice then bool mask", {rnd({3, 4}, t), none, tensor({false, true, true, false})}));
  s.push_back(sample("bool mask with int tensor", {rnd({3, 4}, t), tensor({true, false, true}), idx({3, 1})}));
  s.push_back(sample("empty index", {rnd({4, 5}, t), idx({}, {0})}));
  s.push_back(sample("only slices", {rnd({2, 3}, t), none}));
  return s;
}

std::vector<ErrorInput> index_errors(bool inplace) {
  const std::string prefix = inplace ? "in-place: " : "";
  const std::string op = inplace ? "index_put_" : "index";
  // index_put's samples carry values after the indices: a trailing tensor of the right dtype.
  auto with_values = [&](std::vector<Tensor> ts) {
    if (inplace) ts.push_back(zeros({}, ts[0].dtype()));
    return ts;
  };
  std::vector<ErrorInput> e;
  e.push_back(bad(sample(prefix + "index out of range", with_values({randn({4, 3}), idx({1, 4})})), &typeid(IndexError),
                  {op, "4"}));
  e.push_back(bad(sample(prefix + "negative out of range", with_values({randn({4, 3}), Tensor(), idx({-4})})),
                  &typeid(IndexError), {op, "-4"}));
  e.push_back(
      bad(sample(prefix + "float index", with_values({randn({4, 3}), randn({2})})), &typeid(TypeError), {op, "fp32"}));
  e.push_back(bad(sample(prefix + "too many indices", with_values({randn({4}), idx({0}), idx({0})})),
                  &typeid(IndexError), {op, "too many"}));
  e.push_back(bad(sample(prefix + "shapes do not broadcast", with_values({randn({4, 3}), idx({0, 1}), idx({0, 1, 2})})),
                  &typeid(IndexError), {op, "[2]", "[3]"}));
  e.push_back(bad(sample(prefix + "mask shape mismatch", with_values({randn({4, 3}), tensor({true, false})})),
                  &typeid(IndexError), {op, "[2]", "[4, 3]"}));
  return e;
}

OpInfo index_entry() {
  OpInfo info;
  info.name = "index";
  info.family = OpFamily::Indexing;
  info.schemas = {"index.Tensor"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "NumPy advanced indexing: undefined = full slice, integer tensors broadcast, bool = mask";
  info.samples = index_samples;
  info.op = [](const SampleInput& s) {
    std::vector<Tensor> indices(s.tensors.begin() + 1, s.tensors.end());
    return std::vector<Tensor>{s.tensors[0].index(indices)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    std::vector<RefTensor> entries(in.begin() + 1, in.end());
    std::vector<std::pair<std::vector<int64_t>, double>> values;
    const Shape shape = for_each_indexed(in[0], entries, index_dtypes(s), [&](const auto& o, const auto& src) {
      values.emplace_back(o, in[0].at(src));
    });
    RefTensor out(shape, in[0].dtype);
    for (const auto& [o, v] : values) out.at(o) = v;
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] { return index_errors(false); };
  info.bench_input = [](int64_t n) { return sample("bench", {randn({n / 64, 64}), random_idx({n / 64}, 0, n / 64)}); };
  return info;
}

// index_put: tensors = [self, indices..., values]; ints[0] = accumulate.
OpInfo index_put_entry() {
  OpInfo info;
  info.name = "index_put";
  info.family = OpFamily::Indexing;
  info.schemas = {"index_put", "index_put_"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "values broadcast to the indexed shape; accumulate adds (repeated indices add up)";
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    const Tensor none;
    s.push_back(sample("int tensor, full values", {rnd({4, 3}, t), idx({2, 0, -1}), rnd({3, 3}, t)}, {0}));
    s.push_back(sample("broadcast scalar value", {rnd({4, 3}, t), none, idx({2, 0}), rnd({}, t)}, {0}));
    s.push_back(
        sample("transposed self, broadcast row", {transposed({4, 3}, t), idx({1, 3}), transposed({1, 3}, t)}, {0}));
    s.push_back(sample("separated pair, offset self",
                       {sliced({3, 4, 2}, t), idx({0, 2}), none, idx({1, -1}), rnd({2, 4}, t)}, {0}));
    s.push_back(sample("bool mask", {rnd({3, 4}, t), rnd({3, 4}, DType::Bool), rnd({1}, t)}, {0}));
    s.push_back(sample("accumulate, repeated indices", {rnd({4, 3}, t), idx({1, 3, 1, 1}), rnd({4, 3}, t)}, {1}));
    s.push_back(sample("accumulate, 2-D repeated", {rnd({3, 4}, t), idx({0, 0, 2}), idx({1, 1, 1}), rnd({3}, t)}, {1}));
    s.push_back(sample("empty index", {rnd({4, 3}, t), idx({}, {0}), rnd({3}, t)}, {0}));
    return s;
  };
  auto indices_of = [](const SampleInput& s) {
    return std::vector<Tensor>(s.tensors.begin() + 1, s.tensors.end() - 1);
  };
  info.op = [indices_of](const SampleInput& s) {
    const bool accumulate = !s.ints.empty() && s.ints[0] != 0;
    if (is_inplace_error(s))
      return std::vector<Tensor>{s.tensors[0].index_put_(indices_of(s), s.tensors.back(), accumulate)};
    return std::vector<Tensor>{index_put(s.tensors[0], indices_of(s), s.tensors.back(), accumulate)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const bool accumulate = s.ints[0] != 0;
    std::vector<RefTensor> entries(in.begin() + 1, in.end() - 1);
    std::vector<DType> dtypes = index_dtypes(s);
    dtypes.pop_back();
    RefTensor out = in[0];
    const RefTensor& values = in.back();
    std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pairs;
    const Shape shape =
        for_each_indexed(in[0], entries, dtypes, [&](const auto& o, const auto& dst) { pairs.emplace_back(o, dst); });
    // values broadcast to the result shape (right-aligned).
    for (const auto& [o, dst] : pairs) {
      std::vector<int64_t> vi(values.dim());
      for (int64_t j = 0; j < values.dim(); ++j) {
        const int64_t oj = o[shape.size() - values.dim() + j];
        vi[j] = values.shape[j] == 1 ? 0 : oj;
      }
      const double v = values.dim() == 0 ? values.data[0] : values.at(vi);
      out.at(dst) = accumulate ? out.at(dst) + v : v;
    }
    return std::vector<RefTensor>{out};
  };
  info.inplace = [indices_of](const SampleInput& s) {
    s.tensors[0].index_put_(indices_of(s), s.tensors.back(), !s.ints.empty() && s.ints[0] != 0);
  };
  // Accumulating bf16/fp16 rounds after every addition.
  info.tolerance = [](DType t) {
    if (t == DType::BFloat16) return Tolerance{6e-2, 2e-2};
    if (t == DType::Float16) return Tolerance{8e-3, 4e-3};
    return default_tolerance(t);
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e = index_errors(true);
    e.push_back(bad(sample("in-place: values do not broadcast", {randn({4, 3}), idx({0, 1}), randn({3, 3})}, {0}),
                    &typeid(ValueError), {"index_put_", "[3, 3]", "[2, 3]"}));
    e.push_back(
        bad(sample("in-place: values dtype differs", {randn({4, 3}), idx({0}), randn({3}, DType::Float64)}, {0}),
            &typeid(TypeError), {"index_put_", "fp64"}));
    e.push_back(bad(sample("functional: index out of range", {randn({4, 3}), idx({4}), randn({3})}, {0}),
                    &typeid(IndexError), {"index_put_", "4"}));
    return e;
  };
  return info;
}

// ---- by index along one dim: index_fill, index_copy, index_add; masked_scatter; take_along_dim ----

// self with, for every position p of the written block (self's shape with dim's size the
// index's length), self[p with p[dim] = index[p[dim]]] set to the block's value at p (or that
// value times alpha added). A 0-dim self is one element of a vector.
RefTensor ref_index_along(const RefTensor& self, int64_t dim, const RefTensor& index,
                          const std::function<double(const std::vector<int64_t>&)>& value, bool accumulate) {
  RefTensor out = self;
  Shape self_shape = self.dim() == 0 ? Shape{1} : self.shape;
  out.shape = self_shape;
  dim = wrap(dim, static_cast<int64_t>(self_shape.size()));
  Shape block = self_shape;
  block[dim] = index.numel();
  for_each_index(block, [&](const std::vector<int64_t>& p) {
    std::vector<int64_t> dst = p;
    dst[dim] = wrap_index(index.data[p[dim]], self_shape[dim]);
    out.at(dst) = accumulate ? out.at(dst) + value(p) : value(p);
  });
  out.shape = self.shape;
  return out;
}

// index_fill's, index_copy's and index_add's samples: self, the index, and (with `source`) a
// source block; the dim in ints. `distinct`: no index repeats (index_copy).
std::vector<SampleInput> index_along_samples(DType t, bool source, bool distinct) {
  auto block = [&](Shape shape, int64_t dim, int64_t n) {
    shape[dim] = n;
    return rnd(shape, t);
  };
  auto with = [&](std::string label, Tensor self, Tensor index, int64_t dim) {
    std::vector<Tensor> ts = {self, index};
    if (source) {
      Shape shape = self.dim() == 0 ? Shape{1} : Shape(self.sizes().begin(), self.sizes().end());
      Tensor b = block(shape, wrap(dim, static_cast<int64_t>(shape.size())), index.numel());
      ts.push_back(self.dim() == 0 ? b.reshape({}) : b);
    }
    return sample(std::move(label), ts, {dim});
  };
  std::vector<SampleInput> s;
  s.push_back(with(distinct ? "contiguous, negative" : "contiguous, repeated and negative", rnd({4, 5}, t),
                   distinct ? idx({0, 3, -1}) : idx({0, 3, -1, 0, 4}), 1));
  s.push_back(with("transposed self, dim 0", transposed({4, 3}, t), idx({2, 0}), 0));
  s.push_back(with("offset self, strided index, dim -1", sliced({3, 6}, t), strided_idx({5, 2, 0}), -1));
  s.push_back(with("3-D, middle dim", rnd({2, 4, 3}, t), idx({3, 1}), 1));
  s.push_back(with("0-dim index", rnd({4, 5}, t), idx({2}), 1));
  s.push_back(with("int32 index", rnd({4, 5}, t), idx({1, 3}).to(DType::Int32), 0));
  s.push_back(with("empty index", rnd({4, 5}, t), idx({}, {0}), 0));
  s.push_back(with("zero-size self", rnd({0, 3}, t), idx({2, 0}), 1));
  s.push_back(with("0-dim self", rnd({}, t), idx({0}, {1}), 0));
  return s;
}

std::vector<ErrorInput> index_along_errors(const std::string& name, bool source) {
  const std::string op = name + "_";
  auto with = [source](std::string label, Tensor self, Tensor index, int64_t dim, Tensor src = Tensor()) {
    std::vector<Tensor> ts = {self, index};
    if (source) ts.push_back(src.defined() ? src : randn({4, index.numel()}));
    return sample(std::move(label), ts, {dim}, {2});
  };
  std::vector<ErrorInput> e;
  for (const std::string prefix : {"", "in-place: "}) {
    e.push_back(
        bad(with(prefix + "index out of range", randn({4, 5}), idx({1, 5}), 1), &typeid(IndexError), {op, "5"}));
    e.push_back(bad(with(prefix + "float index", randn({4, 5}), randn({2}), 1), &typeid(TypeError), {op, "fp32"}));
    e.push_back(bad(with(prefix + "2-D index", randn({4, 5}), idx({0, 1, 2, 3}, {2, 2}), 1), &typeid(IndexError),
                    {op, "(2, 2)"}));
    e.push_back(bad(with(prefix + "dim out of range", randn({4, 5}), idx({0}), 2), &typeid(IndexError), {op, "2"}));
    if (source) {
      e.push_back(bad(with(prefix + "source shape", randn({4, 5}), idx({0, 1}), 1, randn({4, 3})), &typeid(ValueError),
                      {op, "(4, 3)", "(4, 2)"}));
      e.push_back(bad(with(prefix + "source dtype", randn({4, 5}), idx({0, 1}), 1, randn({4, 2}, DType::Float64)),
                      &typeid(TypeError), {op, "fp64"}));
    }
  }
  return e;
}

OpInfo index_fill_entry() {
  OpInfo info;
  info.name = "index_fill";
  info.family = OpFamily::Indexing;
  info.schemas = {"index_fill.int_Scalar", "index_fill_.int_Scalar"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "negative indices count from the end";
  info.samples = [](DType t) {
    std::vector<SampleInput> s = index_along_samples(t, false, false);
    for (SampleInput& x : s) x.scalars = {t == DType::Bool ? 1.0 : 5.0};
    return s;
  };
  info.op = [](const SampleInput& s) {
    const Scalar v(s.scalars[0]);
    if (is_inplace_error(s)) return std::vector<Tensor>{s.tensors[0].index_fill_(s.ints[0], s.tensors[1], v)};
    return std::vector<Tensor>{index_fill(s.tensors[0], s.ints[0], s.tensors[1], v)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const double v = s.scalars[0];
    return std::vector<RefTensor>{ref_index_along(
        in[0], s.ints[0], in[1], [v](const std::vector<int64_t>&) { return v; }, false)};
  };
  info.inplace = [](const SampleInput& s) { s.tensors[0].index_fill_(s.ints[0], s.tensors[1], Scalar(s.scalars[0])); };
  info.error_inputs = [] { return index_along_errors("index_fill", false); };
  return info;
}

OpInfo index_copy_entry() {
  OpInfo info;
  info.name = "index_copy";
  info.family = OpFamily::Indexing;
  info.schemas = {"index_copy", "index_copy_"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "negative indices count from the end (PyTorch refuses them); repeated indices: one write wins";
  info.samples = [](DType t) { return index_along_samples(t, true, true); };
  info.op = [](const SampleInput& s) {
    if (is_inplace_error(s))
      return std::vector<Tensor>{s.tensors[0].index_copy_(s.ints[0], s.tensors[1], s.tensors[2])};
    return std::vector<Tensor>{index_copy(s.tensors[0], s.ints[0], s.tensors[1], s.tensors[2])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& src = in[2];
    return std::vector<RefTensor>{ref_index_along(
        in[0], s.ints[0], in[1],
        [&src](const std::vector<int64_t>& p) { return src.dim() == 0 ? src.data[0] : src.at(p); }, false)};
  };
  info.inplace = [](const SampleInput& s) { s.tensors[0].index_copy_(s.ints[0], s.tensors[1], s.tensors[2]); };
  info.error_inputs = [] { return index_along_errors("index_copy", true); };
  return info;
}

// The sample's alpha: an integer Scalar when the value is whole (integer selfs refuse a floating
// one), else a floating one.
Scalar index_add_alpha(const SampleInput& s) {
  const double a = s.scalars[0];
  return a == std::floor(a) ? Scalar(static_cast<int64_t>(a)) : Scalar(a);
}

OpInfo index_add_entry() {
  OpInfo info;
  info.name = "index_add";
  info.family = OpFamily::Indexing;
  info.schemas = {"index_add", "index_add_"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "source * alpha added; repeated indices add up; negative indices count from the end";
  info.samples = [](DType t) {
    std::vector<SampleInput> s = index_along_samples(t, true, false);
    for (size_t i = 0; i < s.size(); ++i) s[i].scalars = {t == DType::Bool || i % 2 == 0 ? 1.0 : 3.0};
    return s;
  };
  info.op = [](const SampleInput& s) {
    const Scalar alpha = index_add_alpha(s);
    if (is_inplace_error(s))
      return std::vector<Tensor>{s.tensors[0].index_add_(s.ints[0], s.tensors[1], s.tensors[2], alpha)};
    return std::vector<Tensor>{index_add(s.tensors[0], s.ints[0], s.tensors[1], s.tensors[2], alpha)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& src = in[2];
    const double alpha = s.scalars[0];
    RefTensor out = ref_index_along(
        in[0], s.ints[0], in[1],
        [&src, alpha](const std::vector<int64_t>& p) { return alpha * (src.dim() == 0 ? src.data[0] : src.at(p)); },
        true);
    if (out.dtype == DType::Bool) {
      for (double& v : out.data) v = v != 0 ? 1 : 0;
    }
    return std::vector<RefTensor>{out};
  };
  info.tolerance = [](DType t) { return t == DType::BFloat16 ? Tolerance{6e-2, 2e-2} : default_tolerance(t); };
  info.inplace = [](const SampleInput& s) {
    s.tensors[0].index_add_(s.ints[0], s.tensors[1], s.tensors[2], index_add_alpha(s));
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e = index_along_errors("index_add", true);
    e.push_back(bad(sample("floating alpha, integer self",
                           {zeros({4, 5}, DType::Int32), idx({0}), zeros({4, 1}, DType::Int32)}, {1}, {0.5}),
                    &typeid(TypeError), {"index_add_", "int32"}));
    return e;
  };
  return info;
}

OpInfo masked_scatter_entry() {
  OpInfo info;
  info.name = "masked_scatter";
  info.family = OpFamily::Indexing;
  info.schemas = {"masked_scatter", "masked_scatter_"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "source's first values, in row-major order, where the mask is true; reads the count on the host";
  info.samples = [](DType t) {
    auto mask = [](Shape shape, uint32_t seed) {
      std::mt19937 gen(seed);
      std::vector<bool> v;
      int64_t n = 1;
      for (int64_t x : shape) n *= x;
      for (int64_t i = 0; i < n; ++i) v.push_back(gen() % 2 == 0);
      std::vector<double> d(v.begin(), v.end());
      return tensor(d, shape, DType::Float64).to(DType::Bool);
    };
    std::vector<SampleInput> s;
    s.push_back(sample("contiguous", {rnd({4, 5}, t), mask({4, 5}, 1), rnd({20}, t)}));
    s.push_back(sample("broadcast mask, 2-D source", {rnd({4, 5}, t), mask({1, 5}, 2), rnd({5, 5}, t)}));
    s.push_back(sample("transposed self and mask", {transposed({4, 3}, t), mask({3, 4}, 3).t(), rnd({12}, t)}));
    s.push_back(sample("offset self, larger source", {sliced({3, 6}, t), mask({3, 6}, 4), rnd({30}, t)}));
    s.push_back(sample("self broadcast by the mask", {rnd({1, 5}, t), mask({3, 5}, 5), rnd({15}, t)}));
    s.push_back(sample("all false", {rnd({2, 3}, t), zeros({2, 3}, DType::Bool), rnd({0}, t)}));
    s.push_back(sample("zero-size", {rnd({0, 3}, t), mask({0, 3}, 6), rnd({2}, t)}));
    s.push_back(sample("0-dim", {rnd({}, t), ones({}, DType::Bool), rnd({1}, t)}));
    return s;
  };
  info.op = [](const SampleInput& s) {
    if (is_inplace_error(s)) return std::vector<Tensor>{s.tensors[0].masked_scatter_(s.tensors[1], s.tensors[2])};
    return std::vector<Tensor>{masked_scatter(s.tensors[0], s.tensors[1], s.tensors[2])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    const RefTensor& self = in[0];
    const RefTensor& mask = in[1];
    Shape shape = self.shape;
    // The functional form broadcasts self with the mask.
    if (mask.dim() > static_cast<int64_t>(shape.size())) shape.insert(shape.begin(), mask.dim() - shape.size(), 1);
    for (size_t j = 0; j < shape.size(); ++j) {
      const int64_t mj = static_cast<int64_t>(j) - (static_cast<int64_t>(shape.size()) - mask.dim());
      if (mj >= 0 && shape[j] == 1) shape[j] = mask.shape[mj];
    }
    RefTensor out(shape, self.dtype);
    size_t k = 0;
    for_each_index(shape, [&](const std::vector<int64_t>& p) {
      std::vector<int64_t> sp(self.shape.size()), mp(mask.shape.size());
      for (size_t j = 0; j < sp.size(); ++j) {
        const size_t pj = j + shape.size() - sp.size();
        sp[j] = self.shape[j] == 1 ? 0 : p[pj];
      }
      for (size_t j = 0; j < mp.size(); ++j) {
        const size_t pj = j + shape.size() - mp.size();
        mp[j] = mask.shape[j] == 1 ? 0 : p[pj];
      }
      const bool on = mask.dim() == 0 ? mask.data[0] != 0 : mask.at(mp) != 0;
      const double old = self.dim() == 0 ? self.data[0] : self.at(sp);
      if (shape.empty()) out.data[0] = on ? in[2].data[k++] : old;
      else out.at(p) = on ? in[2].data[k++] : old;
    });
    return std::vector<RefTensor>{out};
  };
  info.inplace = [](const SampleInput& s) { s.tensors[0].masked_scatter_(s.tensors[1], s.tensors[2]); };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    for (const std::string prefix : {"", "in-place: "}) {
      e.push_back(bad(sample(prefix + "source too small", {randn({2, 3}), ones({2, 3}, DType::Bool), randn({5})}),
                      &typeid(ValueError), {"masked_scatter_", "6", "5"}));
      e.push_back(bad(sample(prefix + "integer mask", {randn({2, 3}), ones({2, 3}, DType::Int64), randn({6})}),
                      &typeid(TypeError), {"masked_scatter_", "int64"}));
      e.push_back(
          bad(sample(prefix + "source dtype", {randn({2, 3}), ones({2, 3}, DType::Bool), randn({6}, DType::Float64)}),
              &typeid(TypeError), {"masked_scatter_", "fp64"}));
    }
    e.push_back(bad(sample("in-place: mask larger than self", {randn({1, 3}), ones({2, 3}, DType::Bool), randn({6})}),
                    &typeid(ValueError), {"masked_scatter_", "(2, 3)", "(1, 3)"}));
    return e;
  };
  return info;
}

OpInfo take_along_dim_entry() {
  OpInfo info;
  info.name = "take_along_dim";
  info.family = OpFamily::Indexing;
  info.schemas = {"take_along_dim"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "gather with self and indices broadcast; without a dim, from the flattened self";
  // ints: {} for dim=None, else {dim}.
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    s.push_back(sample("dim 1", {rnd({4, 5}, t), random_idx({4, 3}, 0, 5)}, {1}));
    s.push_back(sample("indices broadcast, dim -1", {rnd({4, 5}, t), random_idx({1, 6}, 0, 5)}, {-1}));
    s.push_back(sample("self broadcast, dim 0", {rnd({3, 1}, t), random_idx({2, 4}, 0, 3)}, {0}));
    s.push_back(sample("transposed self, offset indices",
                       {transposed({4, 5}, t), random_idx({5, 3}, 0, 5).narrow(0, 1, 4)}, {1}));
    s.push_back(sample("no dim", {rnd({4, 5}, t), random_idx({2, 3}, 0, 20)}));
    s.push_back(sample("0-dim", {rnd({}, t), idx({0})}, {0}));
    s.push_back(sample("zero-size indices", {rnd({4, 5}, t), idx({}, {4, 0})}, {1}));
    return s;
  };
  info.op = [](const SampleInput& s) {
    std::optional<int64_t> dim;
    if (!s.ints.empty()) dim = s.ints[0];
    return std::vector<Tensor>{take_along_dim(s.tensors[0], s.tensors[1], dim)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& self = in[0];
    const RefTensor& index = in[1];
    if (s.ints.empty()) {  // a vector, as PyTorch's self.view(-1).gather(0, indices.view(-1))
      RefTensor out({index.numel()}, self.dtype);
      for (size_t i = 0; i < index.data.size(); ++i) out.data[i] = self.data[static_cast<size_t>(index.data[i])];
      return std::vector<RefTensor>{out};
    }
    if (self.dim() == 0) {
      RefTensor out({}, self.dtype);
      out.data[0] = self.data[0];
      return std::vector<RefTensor>{out};
    }
    const int64_t dim = wrap(s.ints[0], self.dim());
    Shape shape(self.shape.size());
    for (size_t j = 0; j < shape.size(); ++j) {
      shape[j] = static_cast<int64_t>(j) == dim ? index.shape[j] : std::max(self.shape[j], index.shape[j]);
    }
    RefTensor out(shape, self.dtype);
    for_each_index(shape, [&](const std::vector<int64_t>& p) {
      std::vector<int64_t> ip = p, sp = p;
      for (size_t j = 0; j < p.size(); ++j) {
        if (index.shape[j] == 1) ip[j] = 0;
        if (self.shape[j] == 1) sp[j] = 0;
      }
      sp[dim] = static_cast<int64_t>(index.at(ip));
      out.at(p) = self.at(sp);
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    std::vector<ErrorInput> e;
    e.push_back(bad(sample("index out of range", {randn({4, 5}), idx({0, 5}, {1, 2})}, {1}), &typeid(IndexError),
                    {"take_along_dim", "5"}));
    e.push_back(bad(sample("dims differ", {randn({4, 5}), idx({0, 1})}, {1}), &typeid(ValueError),
                    {"take_along_dim", "2 dims", "1 dims"}));
    e.push_back(bad(sample("float indices", {randn({4, 5}), randn({4, 1})}, {1}), &typeid(TypeError),
                    {"take_along_dim", "fp32"}));
    e.push_back(bad(sample("dim out of range", {randn({4, 5}), idx({0}, {1, 1})}, {2}), &typeid(IndexError),
                    {"take_along_dim", "2"}));
    return e;
  };
  return info;
}
}  // namespace

ANATOMY_REGISTER_OPS(indexing) {
  return {cat_entry(),           stack_entry(),     index_select_entry(),   gather_entry(),        take_entry(),
          embedding_entry(),     scatter_entry(),   scatter_value_entry(),  scatter_add_entry(),   masked_fill_entry(),
          masked_select_entry(), nonzero_entry(),   index_entry(),          index_put_entry(),     index_fill_entry(),
          index_copy_entry(),    index_add_entry(), masked_scatter_entry(), take_along_dim_entry()};
}

}  // namespace anatomy::testing
