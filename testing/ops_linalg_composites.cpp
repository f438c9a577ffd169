// Op-table entries: the linear-algebra composites (mv, addmv, addbmm, tensordot, kron, diag,
// diag_embed, trace, cdist, einsum). References are plain fp64 loops over RefTensor.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kProductDtypes = {DType::UInt8,   DType::Int8,     DType::Int32,   DType::Int64,
                                           DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kAll = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                                 DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kFloating = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

using Shape = std::vector<int64_t>;

// Floats in [-1, 1] and small integers, so that int8 sums stay far from int32's range.
Tensor rnd(Shape shape, DType t) {
  Domain d;
  d.low = -1;
  d.high = 1;
  d.int_low = -9;
  d.int_high = 10;
  return random_tensor(std::move(shape), t, d);
}

// int8 x int8 returns int32, as mm does.
DType product_of(DType t) { return t == DType::Int8 ? DType::Int32 : t; }

// Sums of up to about 30 products: fp16 and bf16 accumulate in fp32 and round once.
Tolerance product_tolerance(DType t) {
  switch (t) {
    case DType::Float16:
      return {1e-2, 2e-3};
    case DType::BFloat16:
      return {6e-2, 1e-2};
    case DType::Float32:
      return {2e-5, 1e-5};
    case DType::Float64:
      return {1e-12, 1e-12};
    default:
      return {0, 0};
  }
}

std::vector<double> scalars_for(DType t, double beta, double alpha) {
  if (!is_floating(t)) return {std::round(beta), std::round(alpha)};
  return {beta, alpha};
}

Scalar scalar_arg(double v, const Tensor& t) {
  if (!is_floating(t.dtype()) && v == std::round(v)) return Scalar(static_cast<int64_t>(v));
  return Scalar(v);
}

// beta * self (broadcast) + alpha * product, self ignored when beta is 0.
RefTensor add_scaled(const RefTensor& self, const RefTensor& product, double beta, double alpha) {
  RefTensor out(product.shape, product.dtype);
  for_each_index(product.shape, [&](const std::vector<int64_t>& idx) {
    double v = alpha * product.at(idx);
    if (beta != 0) {
      std::vector<int64_t> si(self.shape.size());
      for (size_t d = 0; d < si.size(); ++d) si[d] = self.shape[d] == 1 ? 0 : idx[d + idx.size() - si.size()];
      v += beta * round_to(self.at(si), product.dtype);
    }
    out.at(idx) = v;
  });
  return out;
}

// [n, k] @ [k] -> [n].
RefTensor ref_mv(const RefTensor& a, const RefTensor& v, DType result) {
  RefTensor out({a.shape[0]}, result);
  for (int64_t i = 0; i < a.shape[0]; ++i) {
    double sum = 0;
    for (int64_t k = 0; k < a.shape[1]; ++k) sum += a.at({i, k}) * v.data[k];
    out.data[i] = sum;
  }
  return out;
}

OpInfo product_entry(std::string name) {
  OpInfo info;
  info.name = name;
  info.family = OpFamily::Linalg;
  info.schemas = {std::move(name)};
  info.dtypes = kProductDtypes;
  info.differentiable = true;
  info.tolerance = product_tolerance;
  return info;
}

OpInfo mv_entry() {
  OpInfo info = product_entry("mv");
  info.notes = "mm with the vector as a column";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("contiguous", {rnd({5, 7}, t), rnd({7}, t)}),
        make_sample("transposed, strided vector", {rnd({7, 5}, t).t(), rnd({14}, t).slice(0, 0, 14, 2)}),
        make_sample("offset", {rnd({6, 7}, t).slice(0, 1), rnd({8}, t).slice(0, 1)}),
        make_sample("zero-size k", {rnd({3, 0}, t), rnd({0}, t)}),
        make_sample("zero-size n", {rnd({0, 4}, t), rnd({4}, t)}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].mv(s.tensors[1])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    return std::vector<RefTensor>{ref_mv(in[0], in[1], product_of(in[0].dtype))};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("sizes differ", {randn({2, 3}), randn({4})}, typeid(ValueError), {"mv", "[2, 3]", "[4]"}),
        make_error("2-D vector", {randn({2, 3}), randn({3, 1})}, typeid(ValueError), {"mv", "[3, 1]"}),
        make_error("dtypes differ", {randn({2, 3}), randn({3}, DType::Float64)}, typeid(TypeError),
                   {"mv", "fp32", "fp64"}),
    };
  };
  return info;
}

// scalars = {beta, alpha}.
OpInfo addmv_entry() {
  OpInfo info = product_entry("addmv");
  info.notes = "beta = 0 ignores self (NaN included)";
  info.samples = [](DType t) {
    std::vector<SampleInput> v{
        make_sample("contiguous", {rnd({5}, t), rnd({5, 7}, t), rnd({7}, t)}, {}, {}, scalars_for(t, 1, 1)),
        make_sample("beta and alpha, transposed", {rnd({5}, t), rnd({7, 5}, t).t(), rnd({7}, t)}, {}, {},
                    scalars_for(t, 0.5, 2)),
        make_sample("0-dim self", {rnd({}, t), rnd({5, 7}, t), rnd({7}, t)}, {}, {}, scalars_for(t, 2, 1)),
        make_sample("size-1 self, offset", {rnd({1}, t), rnd({6, 7}, t).slice(0, 1), rnd({7}, t)}, {}, {},
                    scalars_for(t, 1, -1)),
        make_sample("zero-size k is beta * self", {rnd({3}, t), rnd({3, 0}, t), rnd({0}, t)}, {}, {},
                    scalars_for(t, 3, 2)),
        make_sample("beta = 0", {rnd({5}, t), rnd({5, 7}, t), rnd({7}, t)}, {}, {}, scalars_for(t, 0, 2)),
    };
    if (is_floating(t)) {
      v.push_back(make_sample("beta = 0 ignores NaN in self",
                              {full({5}, std::numeric_limits<double>::quiet_NaN(), t), rnd({5, 7}, t), rnd({7}, t)}, {},
                              {}, {0, 1}));
    }
    return v;
  };
  info.op = [](const SampleInput& s) {
    return std::vector<Tensor>{s.tensors[0].addmv(s.tensors[1], s.tensors[2], scalar_arg(s.scalars[0], s.tensors[1]),
                                                  scalar_arg(s.scalars[1], s.tensors[1]))};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor p = ref_mv(in[1], in[2], product_of(in[1].dtype));
    return std::vector<RefTensor>{add_scaled(in[0], p, s.scalars[0], s.scalars[1])};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("self does not broadcast", {randn({3}), randn({2, 3}), randn({3})}, typeid(ValueError),
                   {"addmv", "[3]"}, {}, {}, {1, 1}),
        make_error("sizes differ", {randn({2}), randn({2, 3}), randn({4})}, typeid(ValueError),
                   {"addmv", "[2, 3]", "[4]"}, {}, {}, {1, 1}),
        make_error("self dtype differs", {randn({2}, DType::Float64), randn({2, 3}), randn({3})}, typeid(TypeError),
                   {"addmv", "fp64"}, {}, {}, {1, 1}),
    };
  };
  return info;
}

// scalars = {beta, alpha}.
OpInfo addbmm_entry() {
  OpInfo info = product_entry("addbmm");
  info.notes = "one addmm over the joined batch and inner dims";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("contiguous", {rnd({5, 4}, t), rnd({3, 5, 7}, t), rnd({3, 7, 4}, t)}, {}, {}, scalars_for(t, 1, 1)),
        make_sample("broadcast self, beta and alpha", {rnd({4}, t), rnd({3, 5, 7}, t), rnd({3, 7, 4}, t)}, {}, {},
                    scalars_for(t, 0.5, 2)),
        make_sample("transposed batches",
                    {rnd({5, 4}, t), rnd({3, 7, 5}, t).mT(), rnd({4, 3, 7}, t).permute({1, 2, 0})}, {}, {},
                    scalars_for(t, 1, 1)),
        make_sample("offset", {rnd({5, 4}, t), rnd({4, 5, 7}, t).slice(0, 1), rnd({3, 7, 4}, t)}, {}, {},
                    scalars_for(t, 2, 1)),
        make_sample("zero-size batch is beta * self", {rnd({2, 3}, t), rnd({0, 2, 4}, t), rnd({0, 4, 3}, t)}, {}, {},
                    scalars_for(t, 3, 2)),
        make_sample("beta = 0", {rnd({5, 4}, t), rnd({2, 5, 7}, t), rnd({2, 7, 4}, t)}, {}, {}, scalars_for(t, 0, 1)),
    };
  };
  info.op = [](const SampleInput& s) {
    return std::vector<Tensor>{s.tensors[0].addbmm(s.tensors[1], s.tensors[2], scalar_arg(s.scalars[0], s.tensors[1]),
                                                   scalar_arg(s.scalars[1], s.tensors[1]))};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor &b1 = in[1], &b2 = in[2];
    const int64_t nb = b1.shape[0], n = b1.shape[1], k = b1.shape[2], m = b2.shape[2];
    RefTensor p({n, m}, product_of(b1.dtype));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double sum = 0;
        for (int64_t b = 0; b < nb; ++b)
          for (int64_t kk = 0; kk < k; ++kk) sum += b1.at({b, i, kk}) * b2.at({b, kk, j});
        p.at({i, j}) = sum;
      }
    return std::vector<RefTensor>{add_scaled(in[0], p, s.scalars[0], s.scalars[1])};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("batch sizes differ", {randn({3, 5}), randn({2, 3, 4}), randn({3, 4, 5})}, typeid(ValueError),
                   {"addbmm", "[2, 3, 4]", "[3, 4, 5]"}, {}, {}, {1, 1}),
        make_error("inner sizes differ", {randn({3, 5}), randn({2, 3, 4}), randn({2, 3, 5})}, typeid(ValueError),
                   {"addbmm", "4 != 3"}, {}, {}, {1, 1}),
        make_error("self does not broadcast", {randn({2, 2}), randn({2, 3, 4}), randn({2, 4, 5})}, typeid(ValueError),
                   {"addbmm", "[2, 2]", "[3, 5]"}, {}, {}, {1, 1}),
        make_error("2-D batches", {randn({3, 5}), randn({3, 4}), randn({4, 5})}, typeid(ValueError), {"addbmm", "3-D"},
                   {}, {}, {1, 1}),
    };
  };
  return info;
}

// dims = dims_self, ints = dims_other; scalars[0] = 1: the int form with ints[0] dims.
OpInfo tensordot_entry() {
  OpInfo info = product_entry("tensordot");
  info.notes = "one mm after permutes and reshapes";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("one dim each", {rnd({3, 4, 5}, t), rnd({5, 2}, t)}, {2}, {0}, {0}),
        make_sample("two dims, out of order", {rnd({3, 4, 5}, t), rnd({5, 2, 3}, t)}, {0, 2}, {2, 0}, {0}),
        make_sample("int form: the last two", {rnd({2, 3, 4}, t), rnd({3, 4, 2}, t)}, {}, {2}, {1}),
        make_sample("int form 0: outer product", {rnd({2, 3}, t), rnd({4}, t)}, {}, {0}, {1}),
        make_sample("transposed, negative dims", {rnd({4, 3}, t).t(), rnd({2, 4}, t)}, {-1}, {-1}, {0}),
        make_sample("everything contracted", {rnd({3, 4}, t), rnd({4, 3}, t)}, {0, 1}, {1, 0}, {0}),
        make_sample("zero-size contracted", {rnd({3, 0}, t), rnd({0, 2}, t)}, {1}, {0}, {0}),
    };
  };
  info.op = [](const SampleInput& s) {
    if (s.scalars[0] != 0) return std::vector<Tensor>{tensordot(s.tensors[0], s.tensors[1], s.ints[0])};
    return std::vector<Tensor>{tensordot(s.tensors[0], s.tensors[1], s.dims, s.ints)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor &a = in[0], &b = in[1];
    Shape da, db;
    if (s.scalars[0] != 0) {
      for (int64_t i = 0; i < s.ints[0]; ++i) {
        da.push_back(a.dim() - s.ints[0] + i);
        db.push_back(i);
      }
    } else {
      for (size_t i = 0; i < s.dims.size(); ++i) {
        da.push_back(s.dims[i] < 0 ? s.dims[i] + a.dim() : s.dims[i]);
        db.push_back(s.ints[i] < 0 ? s.ints[i] + b.dim() : s.ints[i]);
      }
    }
    auto contracted = [](const Shape& list, int64_t d) { return std::find(list.begin(), list.end(), d) != list.end(); };
    Shape free_a, free_b, shape, ksizes;
    for (int64_t d = 0; d < a.dim(); ++d) {
      if (!contracted(da, d)) free_a.push_back(d), shape.push_back(a.shape[d]);
    }
    for (int64_t d = 0; d < b.dim(); ++d) {
      if (!contracted(db, d)) free_b.push_back(d), shape.push_back(b.shape[d]);
    }
    for (int64_t d : da) ksizes.push_back(a.shape[d]);
    RefTensor out(shape, product_of(a.dtype));
    for_each_index(shape, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> ia(a.shape.size()), ib(b.shape.size());
      for (size_t i = 0; i < free_a.size(); ++i) ia[free_a[i]] = idx[i];
      for (size_t i = 0; i < free_b.size(); ++i) ib[free_b[i]] = idx[free_a.size() + i];
      double sum = 0;
      for_each_index(ksizes, [&](const std::vector<int64_t>& k) {
        for (size_t i = 0; i < k.size(); ++i) ia[da[i]] = ib[db[i]] = k[i];
        sum += a.at(ia) * b.at(ib);
      });
      out.at(idx) = sum;
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("sizes differ", {randn({3, 4}), randn({5, 2})}, typeid(ValueError),
                   {"tensordot", "dim 1", "size 4", "dim 0", "size 5"}, {1}, {0}, {0}),
        make_error("lists of different lengths", {randn({3, 4}), randn({4, 3})}, typeid(ValueError),
                   {"tensordot", "[0, 1]"}, {0, 1}, {1}, {0}),
        make_error("repeated dim", {randn({3, 3}), randn({3, 3})}, typeid(ValueError), {"tensordot", "more than once"},
                   {0, -2}, {0, 1}, {0}),
        make_error("int form beyond the dims", {randn({3, 4}), randn({4})}, typeid(ValueError), {"tensordot", "3"}, {},
                   {3}, {1}),
        make_error("dtypes differ", {randn({3, 4}), randn({4, 2}, DType::Float64)}, typeid(TypeError),
                   {"tensordot", "fp32", "fp64"}, {1}, {0}, {0}),
    };
  };
  return info;
}

OpInfo kron_entry() {
  OpInfo info;
  info.name = "kron";
  info.family = OpFamily::Linalg;
  info.schemas = {"kron"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "element-wise: mul's promotion";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("2-D", {rnd({2, 3}, t), rnd({3, 2}, t)}),
        make_sample("1-D with 2-D", {rnd({3}, t), rnd({2, 2}, t)}),
        make_sample("transposed and offset", {rnd({3, 2}, t).t(), rnd({3, 3}, t).slice(0, 1)}),
        make_sample("0-dim", {rnd({}, t), rnd({2, 3}, t)}),
        make_sample("mixed dtypes", {rnd({2}, t), rnd({2}, DType::Float64)}),
        make_sample("zero-size", {rnd({0, 2}, t), rnd({2, 2}, t)}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].kron(s.tensors[1])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType t = promoted_dtype(s.tensors);
    const int64_t nd = std::max(in[0].dim(), in[1].dim());
    Shape sa(nd, 1), sb(nd, 1), shape(nd);
    for (int64_t i = 0; i < in[0].dim(); ++i) sa[nd - in[0].dim() + i] = in[0].shape[i];
    for (int64_t i = 0; i < in[1].dim(); ++i) sb[nd - in[1].dim() + i] = in[1].shape[i];
    for (int64_t i = 0; i < nd; ++i) shape[i] = sa[i] * sb[i];
    RefTensor a = in[0], b = in[1];
    a.shape = sa;
    b.shape = sb;
    RefTensor out(shape, t);
    for_each_index(shape, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> ia(nd), ib(nd);
      for (int64_t i = 0; i < nd; ++i) {
        ia[i] = idx[i] / sb[i];
        ib[i] = idx[i] % sb[i];
      }
      out.at(idx) = round_to(a.at(ia), t) * round_to(b.at(ib), t);
    });
    return std::vector<RefTensor>{out};
  };
  return info;
}

// ints = {offset}.
OpInfo diag_entry() {
  OpInfo info;
  info.name = "diag";
  info.family = OpFamily::Linalg;
  info.schemas = {"diag"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "1-D: pads and reshapes (no in-place write); 2-D: a copy of diagonal";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("1-D", {rnd({4}, t)}, {}, {0}),
        make_sample("1-D, offset 2", {rnd({3}, t)}, {}, {2}),
        make_sample("1-D strided, offset -1", {rnd({8}, t).slice(0, 1, 8, 2)}, {}, {-1}),
        make_sample("1-D, empty, offset 2", {rnd({0}, t)}, {}, {2}),
        make_sample("1-D, empty, offset -1", {rnd({0}, t)}, {}, {-1}),
        make_sample("2-D", {rnd({4, 5}, t)}, {}, {0}),
        make_sample("2-D transposed, offset 1", {rnd({5, 4}, t).t()}, {}, {1}),
        make_sample("2-D offset -2", {rnd({4, 3}, t)}, {}, {-2}),
        make_sample("2-D beyond the matrix", {rnd({2, 2}, t)}, {}, {3}),
        make_sample("2-D zero-size", {rnd({0, 3}, t)}, {}, {0}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].diag(s.ints[0])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    const int64_t k = s.ints[0];
    if (a.dim() == 1) {
      const int64_t n = a.shape[0] + std::abs(k);
      RefTensor out({n, n}, a.dtype);
      for (int64_t i = 0; i < a.shape[0]; ++i) out.at({k >= 0 ? i : i - k, k >= 0 ? i + k : i}) = a.data[i];
      return std::vector<RefTensor>{out};
    }
    std::vector<double> values;
    for (int64_t i = 0; i < a.shape[0]; ++i) {
      const int64_t j = i + k;
      if (j >= 0 && j < a.shape[1]) values.push_back(a.at({i, j}));
    }
    RefTensor out({static_cast<int64_t>(values.size())}, a.dtype);
    out.data = values;
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("3-D", {randn({2, 2, 2})}, typeid(ValueError), {"diag", "[2, 2, 2]"}, {}, {0}),
        make_error("0-dim", {randn({})}, typeid(ValueError), {"diag", "[]"}, {}, {0}),
    };
  };
  return info;
}

// ints = {offset, dim1, dim2}.
OpInfo diag_embed_entry() {
  OpInfo info;
  info.name = "diag_embed";
  info.family = OpFamily::Linalg;
  info.schemas = {"diag_embed"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "pads and reshapes, then movedim";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("1-D", {rnd({3}, t)}, {}, {0, -2, -1}),
        make_sample("batched, offset 1", {rnd({2, 3}, t)}, {}, {1, -2, -1}),
        make_sample("dims 0 and 2", {rnd({2, 3}, t)}, {}, {0, 0, 2}),
        make_sample("dims reversed, offset -1, transposed", {rnd({3, 2}, t).t()}, {}, {-1, -1, 0}),
        make_sample("offset input", {rnd({3, 3}, t).slice(0, 1)}, {}, {2, 1, 0}),
        make_sample("zero-size batch", {rnd({0, 2}, t)}, {}, {0, -2, -1}),
    };
  };
  info.op = [](const SampleInput& s) {
    return std::vector<Tensor>{s.tensors[0].diag_embed(s.ints[0], s.ints[1], s.ints[2])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    const int64_t k = s.ints[0], nd = a.dim() + 1;
    const int64_t d1 = s.ints[1] < 0 ? s.ints[1] + nd : s.ints[1], d2 = s.ints[2] < 0 ? s.ints[2] + nd : s.ints[2];
    const int64_t n = a.shape.back() + std::abs(k);
    Shape shape;
    size_t next = 0;
    for (int64_t d = 0; d < nd; ++d) shape.push_back(d == d1 || d == d2 ? n : a.shape[next++]);
    RefTensor out(shape, a.dtype);
    for_each_index(shape, [&](const std::vector<int64_t>& idx) {
      const int64_t i = idx[d1], j = idx[d2];
      if (j - i != k) return;
      std::vector<int64_t> src;
      for (int64_t d = 0; d < nd; ++d) {
        if (d != d1 && d != d2) src.push_back(idx[d]);
      }
      src.push_back(k >= 0 ? i : j);
      out.at(idx) = a.at(src);
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("same dims", {randn({2, 3})}, typeid(ValueError), {"diag_embed", "same dim"}, {}, {0, 1, -2}),
        make_error("0-dim", {randn({})}, typeid(ValueError), {"diag_embed", "[]"}, {}, {0, -2, -1}),
        make_error("dim out of range", {randn({3})}, typeid(IndexError), {"diag_embed", "2"}, {}, {0, 2, 0}),
    };
  };
  return info;
}

OpInfo trace_entry() {
  OpInfo info;
  info.name = "trace";
  info.family = OpFamily::Linalg;
  info.schemas = {"trace"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "sum of diagonal: int64 for integers and bool";
  info.tolerance = product_tolerance;
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("square", {rnd({4, 4}, t)}),
        make_sample("wide, transposed", {rnd({5, 3}, t).t()}),
        make_sample("tall, offset", {rnd({6, 3}, t).slice(0, 1)}),
        make_sample("zero-size", {rnd({0, 3}, t)}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].trace()}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    const RefTensor& a = in[0];
    const DType t = is_floating(a.dtype) ? a.dtype : DType::Int64;
    RefTensor out({}, t);
    for (int64_t i = 0; i < std::min(a.shape[0], a.shape[1]); ++i) out.data[0] += a.at({i, i});
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("1-D", {randn({3})}, typeid(ValueError), {"trace", "[3]"}),
        make_error("3-D", {randn({2, 2, 2})}, typeid(ValueError), {"trace", "[2, 2, 2]"}),
    };
  };
  return info;
}

// scalars = {p, compute_mode (-1: None)}.
OpInfo cdist_entry() {
  OpInfo info;
  info.name = "cdist";
  info.family = OpFamily::Linalg;
  info.schemas = {"cdist"};
  info.dtypes = kFloating;
  info.differentiable = true;
  info.notes = "p = 2 through mm past 25 rows (compute_mode as PyTorch's); else norm of the differences";
  // The matrix-product form subtracts squared norms, so its error is relative to |x|^2.
  info.tolerance = [](DType t) -> Tolerance {
    switch (t) {
      case DType::Float16:
        return {3e-2, 1e-2};
      case DType::BFloat16:
        return {1.5e-1, 4e-2};
      case DType::Float32:
        return {1e-4, 1e-4};
      default:
        return {1e-10, 1e-10};
    }
  };
  info.samples = [](DType t) {
    const double inf = std::numeric_limits<double>::infinity();
    return std::vector<SampleInput>{
        make_sample("p = 2, pairwise", {rnd({4, 5}, t), rnd({3, 5}, t)}, {}, {}, {2, -1}),
        make_sample("p = 2, matrix product (compute_mode 1)", {rnd({4, 5}, t), rnd({3, 5}, t)}, {}, {}, {2, 1}),
        make_sample("p = 2, past 25 rows takes the product", {rnd({30, 3}, t), rnd({2, 3}, t)}, {}, {}, {2, -1}),
        make_sample("p = 2, past 25 rows, compute_mode 2", {rnd({30, 3}, t), rnd({2, 3}, t)}, {}, {}, {2, 2}),
        make_sample("p = 1, transposed", {rnd({5, 4}, t).t(), rnd({3, 5}, t)}, {}, {}, {1, -1}),
        make_sample("p = inf, offset", {rnd({5, 5}, t).slice(0, 1), rnd({3, 5}, t)}, {}, {}, {inf, -1}),
        make_sample("p = 3, batch broadcast", {rnd({2, 3, 4}, t), rnd({1, 2, 4}, t)}, {}, {}, {3, -1}),
        make_sample("p = 0", {rnd({3, 2}, t), rnd({2, 2}, t)}, {}, {}, {0, -1}),
        make_sample("zero-size rows", {rnd({0, 3}, t), rnd({2, 3}, t)}, {}, {}, {2, -1}),
    };
  };
  info.op = [](const SampleInput& s) {
    std::optional<int64_t> mode;
    if (s.scalars[1] >= 0) mode = static_cast<int64_t>(s.scalars[1]);
    return std::vector<Tensor>{cdist(s.tensors[0], s.tensors[1], s.scalars[0], mode)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const double p = s.scalars[0];
    const RefTensor &a = in[0], &b = in[1];
    const int64_t ra = a.dim(), rb = b.dim();
    const int64_t rows1 = a.shape[ra - 2], rows2 = b.shape[rb - 2], m = a.shape[ra - 1];
    Shape batch_a(a.shape.begin(), a.shape.end() - 2), batch_b(b.shape.begin(), b.shape.end() - 2);
    Shape batch(std::max(batch_a.size(), batch_b.size()), 1);
    for (size_t i = 0; i < batch.size(); ++i) {
      const size_t ia = i + batch_a.size(), ib = i + batch_b.size();
      const int64_t x = ia >= batch.size() ? batch_a[ia - batch.size()] : 1;
      const int64_t y = ib >= batch.size() ? batch_b[ib - batch.size()] : 1;
      batch[i] = x == 1 ? y : x;
    }
    Shape shape = batch;
    shape.push_back(rows1);
    shape.push_back(rows2);
    RefTensor out(shape, a.dtype);
    for_each_index(shape, [&](const std::vector<int64_t>& idx) {
      auto at = [&](const RefTensor& t, const Shape& tb, int64_t row, int64_t col) {
        std::vector<int64_t> i;
        for (size_t d = 0; d < tb.size(); ++d) i.push_back(tb[d] == 1 ? 0 : idx[d + batch.size() - tb.size()]);
        i.push_back(row);
        i.push_back(col);
        return t.at(i);
      };
      const int64_t r1 = idx[batch.size()], r2 = idx[batch.size() + 1];
      double acc = 0;
      for (int64_t c = 0; c < m; ++c) {
        const double d = std::abs(at(a, batch_a, r1, c) - at(b, batch_b, r2, c));
        if (p == 0) {
          acc += d != 0 ? 1 : 0;
        } else if (std::isinf(p)) {
          acc = std::max(acc, d);
        } else {
          acc += std::pow(d, p);
        }
      }
      out.at(idx) = (p == 0 || std::isinf(p)) ? acc : std::pow(acc, 1 / p);
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("negative p", {randn({3, 2}), randn({2, 2})}, typeid(ValueError), {"cdist", "-1"}, {}, {}, {-1, -1}),
        make_error("integer inputs", {zeros({3, 2}, DType::Int64), zeros({2, 2}, DType::Int64)}, typeid(TypeError),
                   {"cdist", "int64"}, {}, {}, {2, -1}),
        make_error("columns differ", {randn({3, 2}), randn({2, 3})}, typeid(ValueError), {"cdist", "[3, 2]", "[2, 3]"},
                   {}, {}, {2, -1}),
        make_error("1-D input", {randn({3}), randn({2, 3})}, typeid(ValueError), {"cdist", "[3]"}, {}, {}, {2, -1}),
        make_error("bad compute_mode", {randn({3, 2}), randn({2, 2})}, typeid(ValueError),
                   {"cdist", "compute_mode", "5"}, {}, {}, {2, 5}),
    };
  };
  return info;
}

// The reference's einsum: "..." becomes one label per broadcast dim (right-aligned), every
// label's size is its size in the operands (size 1 broadcasts), and each output element
// sums the product of the operands over every assignment of the labels the output lacks.
RefTensor ref_einsum(const std::string& equation, const std::vector<RefTensor>& in, DType result) {
  const size_t arrow = equation.find("->");
  std::vector<std::string> terms;
  std::string lhs = equation.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  int64_t ne = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t dots = terms[i].find("...");
    if (dots != std::string::npos) ne = std::max<int64_t>(ne, in[i].dim() - static_cast<int64_t>(terms[i].size() - 3));
  }
  // Labels: letters as themselves, ellipsis dim e as 256 + e.
  auto expand = [&](const std::string& term, int64_t ndim) {
    std::vector<int> labels;
    for (size_t c = 0; c < term.size(); ++c) {
      if (term[c] == '.') {
        const int64_t own = ndim - static_cast<int64_t>(term.size() - 3);
        for (int64_t e = ne - own; e < ne; ++e) labels.push_back(256 + static_cast<int>(e));
        c += 2;
      } else {
        labels.push_back(term[c]);
      }
    }
    return labels;
  };
  std::vector<std::vector<int>> labels;
  std::map<int, int64_t> size;
  std::map<int, int> uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    labels.push_back(expand(terms[i], in[i].dim()));
    for (size_t d = 0; d < labels[i].size(); ++d) {
      // Size 1 broadcasts; any other size (0 included) is the label's.
      if (!size.count(labels[i][d]) || in[i].shape[d] != 1) size[labels[i][d]] = in[i].shape[d];
      ++uses[labels[i][d]];
    }
  }
  std::vector<int> out;
  if (arrow != std::string::npos) {
    out = expand(equation.substr(arrow + 2), ne + static_cast<int64_t>(equation.size() - arrow - 2 - 3));
  } else {
    for (int64_t e = 0; e < ne; ++e) out.push_back(256 + static_cast<int>(e));
    for (const auto& [l, n] : uses) {
      if (l < 256 && n == 1) out.push_back(l);
    }
  }
  std::vector<int> summed;
  for (const auto& [l, n] : size) {
    if (std::find(out.begin(), out.end(), l) == out.end()) summed.push_back(l);
  }
  Shape out_shape, sum_shape;
  for (int l : out) out_shape.push_back(size[l]);
  for (int l : summed) sum_shape.push_back(size[l]);
  RefTensor r(out_shape, result);
  for_each_index(out_shape, [&](const std::vector<int64_t>& oi) {
    std::map<int, int64_t> value;
    for (size_t d = 0; d < out.size(); ++d) value[out[d]] = oi[d];
    double total = 0;
    for_each_index(sum_shape, [&](const std::vector<int64_t>& si) {
      for (size_t d = 0; d < summed.size(); ++d) value[summed[d]] = si[d];
      double prod = 1;
      for (size_t i = 0; i < in.size(); ++i) {
        std::vector<int64_t> idx;
        for (size_t d = 0; d < labels[i].size(); ++d) idx.push_back(in[i].shape[d] == 1 ? 0 : value[labels[i][d]]);
        prod *= in[i].at(idx);
      }
      total += prod;
    });
    r.at(oi) = total;
  });
  return r;
}

// The sample's label is the equation.
OpInfo einsum_entry() {
  OpInfo info = product_entry("einsum");
  info.notes = "one bmm per operand after the first, around views";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("ij,jk->ik", {rnd({3, 4}, t), rnd({4, 5}, t)}),
        make_sample("bhqd,bhkd->bhqk", {rnd({2, 2, 3, 4}, t), rnd({2, 2, 5, 4}, t)}),
        make_sample("bij,bjk", {rnd({3, 3, 4}, t).slice(0, 1), rnd({2, 5, 4}, t).mT()}),
        make_sample("ii->i", {rnd({3, 3}, t)}),
        make_sample("ii", {rnd({3, 3}, t)}),
        make_sample("ij->ji", {rnd({4, 3}, t).t()}),
        make_sample("ij,kl->ik", {rnd({2, 3}, t), rnd({4, 2}, t)}),
        make_sample("i,j->ij", {rnd({3}, t), rnd({4}, t)}),
        make_sample("...ij,...jk->...ik", {rnd({2, 1, 3, 4}, t), rnd({3, 4, 2}, t)}),
        make_sample("ij,jk,kl->il", {rnd({2, 3}, t), rnd({3, 4}, t), rnd({4, 2}, t)}),
        make_sample("iij,jk->ik", {rnd({2, 2, 3}, t), rnd({3, 2}, t)}),
        make_sample("ijk->", {rnd({0, 2, 3}, t)}),
        make_sample("ij,jk->ik", {rnd({2, 0}, t), rnd({0, 3}, t)}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{einsum(s.label, s.tensors)}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return std::vector<RefTensor>{ref_einsum(s.label, in, in.size() > 1 ? product_of(in[0].dtype) : in[0].dtype)};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("ij,jk->ik", {randn({2, 3}), randn({4, 2})}, typeid(ValueError), {"einsum", "'j'", "3", "4"}),
        make_error("ij->k", {randn({2, 3})}, typeid(ValueError), {"einsum", "'k'"}),
        make_error("ij,jk->ik", {randn({2, 3})}, typeid(ValueError), {"einsum", "2 operands", "1 tensors"}),
        make_error("i1->i", {randn({2, 3})}, typeid(ValueError), {"einsum", "'1'"}),
        make_error("ij->ii", {randn({2, 3})}, typeid(ValueError), {"einsum", "repeats"}),
        make_error("ijk->i", {randn({2, 3})}, typeid(ValueError), {"einsum", "2 dims", "3"}),
        make_error("ij,jk->ik", {randn({2, 3}), randn({3, 2}, DType::Float64)}, typeid(TypeError),
                   {"einsum", "fp32", "fp64"}),
    };
  };
  return info;
}

}  // namespace

ANATOMY_REGISTER_OPS(linalg_composites) {
  return {mv_entry(),   addmv_entry(), addbmm_entry(),     tensordot_entry(), kron_entry(),
          diag_entry(), trace_entry(), diag_embed_entry(), cdist_entry(),     einsum_entry()};
}

}  // namespace anatomy::testing
