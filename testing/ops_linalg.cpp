// Op-table entries: matrix products (mm, bmm, matmul, addmm, baddbmm, _addmm_activation, linear,
// dot, outer).
// References are plain fp64 loops over RefTensor, with NumPy's matmul rules written out here.
#include <cmath>
#include <limits>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kProductDtypes = {DType::UInt8,   DType::Int8,     DType::Int32,   DType::Int64,
                                           DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const std::vector<DType> kAll = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                                 DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// The largest k of the samples below: the absolute tolerances grow with sqrt(k).
constexpr double kMaxK = 70;

// Floats in [-1, 1] keep a sum of k products near sqrt(k); integers small enough that int8
// products summed over k stay far from int32's range (uint8 sums do wrap, as they must).
Domain operand_domain() {
  Domain d;
  d.low = -1;
  d.high = 1;
  d.int_low = -9;
  d.int_high = 10;
  return d;
}

Tensor rnd(std::vector<int64_t> shape, DType t) { return random_tensor(std::move(shape), t, operand_domain()); }

// The documented exception: int8 x int8 returns int32.
DType product_of(DType t) { return t == DType::Int8 ? DType::Int32 : t; }

// Products accumulate k terms: fp16 and bf16 accumulate in fp32 and round once, so the
// rounding is relative; fp32 and fp64 accumulate in their own type, so an absolute term
// growing with sqrt(k) covers cancellation.
Tolerance product_tolerance(DType t) {
  const double sk = std::sqrt(kMaxK);
  switch (t) {
    case DType::Float16:
      return {2e-3 * sk, 2e-3};
    case DType::BFloat16:
      return {1e-2 * sk, 1e-2};
    case DType::Float32:
      return {2e-6 * sk, 1e-5};
    case DType::Float64:
      return {1e-13 * sk, 1e-12};
    default:
      return {0, 0};
  }
}

// NumPy's matmul in fp64: a 1-D first operand is a row, a 1-D second one a column (and the
// added dim is dropped), batch dims broadcast. Sums exactly in fp64, rounds once to `result`.
RefTensor ref_matmul(const RefTensor& a, const RefTensor& b, DType result) {
  const std::vector<int64_t> as = a.dim() == 1 ? std::vector<int64_t>{1, a.shape[0]} : a.shape;
  const std::vector<int64_t> bs = b.dim() == 1 ? std::vector<int64_t>{b.shape[0], 1} : b.shape;
  const int64_t n = as[as.size() - 2], k = as[as.size() - 1], m = bs[bs.size() - 1];
  const size_t ba = as.size() - 2, bb = bs.size() - 2, nb = std::max(ba, bb);
  std::vector<int64_t> batch(nb, 1);
  for (size_t i = 0; i < nb; ++i) {
    const int64_t x = i + ba >= nb ? as[i + ba - nb] : 1, y = i + bb >= nb ? bs[i + bb - nb] : 1;
    batch[i] = x == 1 ? y : x;
  }
  std::vector<int64_t> shape = batch;
  if (a.dim() > 1) shape.push_back(n);
  if (b.dim() > 1) shape.push_back(m);
  RefTensor out(shape, result);
  // Flat positions in row-major order: batch..., then i, j (the dropped dims have size 1).
  int64_t flat = 0;
  for_each_index(batch, [&](const std::vector<int64_t>& bi) {
    // The operands' batch indices: right-aligned, size-1 dims broadcast.
    auto operand_index = [&](const std::vector<int64_t>& s, size_t nbatch) {
      std::vector<int64_t> idx(nbatch + 2, 0);
      for (size_t d = 0; d < nbatch; ++d) idx[d] = s[d] == 1 ? 0 : bi[d + nb - nbatch];
      return idx;
    };
    std::vector<int64_t> ia = operand_index(as, ba), ib = operand_index(bs, bb);
    auto a_at = [&](int64_t i, int64_t kk) {
      if (a.dim() == 1) return a.data[kk];
      ia[ba] = i;
      ia[ba + 1] = kk;
      return a.at(ia);
    };
    auto b_at = [&](int64_t kk, int64_t j) {
      if (b.dim() == 1) return b.data[kk];
      ib[bb] = kk;
      ib[bb + 1] = j;
      return b.at(ib);
    };
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) sum += a_at(i, kk) * b_at(kk, j);
        out.data[flat++] = sum;
      }
    }
  });
  return out;
}

// beta * self + alpha * product, self broadcast to the product's shape; beta == 0 ignores self.
RefTensor ref_add_scaled(const RefTensor& self, const RefTensor& product, double beta, double alpha) {
  RefTensor b(product.shape, product.dtype);
  if (beta != 0) b = map_unary(self, product.dtype, [](double v) { return v; });
  RefTensor out(product.shape, product.dtype);
  const std::vector<int64_t> bs = b.shape;
  for_each_index(product.shape, [&](const std::vector<int64_t>& idx) {
    double v = alpha * product.at(idx);
    if (beta != 0) {
      std::vector<int64_t> si(bs.size());
      for (size_t d = 0; d < bs.size(); ++d) {
        const size_t pd = d + idx.size() - bs.size();
        si[d] = bs[d] == 1 ? 0 : idx[pd];
      }
      v += beta * b.at(si);
    }
    out.at(idx) = v;
  });
  return out;
}

RefTensor ref_transpose(const RefTensor& t) {
  RefTensor out({t.shape[1], t.shape[0]}, t.dtype);
  for (int64_t i = 0; i < t.shape[0]; ++i)
    for (int64_t j = 0; j < t.shape[1]; ++j) out.at({j, i}) = t.at({i, j});
  return out;
}

SampleInput sample(std::string label, std::vector<Tensor> tensors, std::vector<double> scalars = {}) {
  SampleInput s;
  s.label = std::move(label);
  s.tensors = std::move(tensors);
  s.scalars = std::move(scalars);
  return s;
}

// [n, k] @ [k, m] operand pairs in every layout the kernels tell apart.
std::vector<SampleInput> matrix_pairs(DType t) {
  std::vector<SampleInput> v;
  v.push_back(sample("contiguous", {rnd({5, 7}, t), rnd({7, 4}, t)}));
  v.push_back(sample("transposed first", {rnd({7, 5}, t).t(), rnd({7, 4}, t)}));
  v.push_back(sample("transposed second", {rnd({5, 7}, t), rnd({4, 7}, t).t()}));
  v.push_back(sample("transposed both", {rnd({7, 5}, t).t(), rnd({4, 7}, t).t()}));
  v.push_back(sample("offset (sliced)",
                     {rnd({8, 10}, t).slice(0, 1, 6).slice(1, 2, 9), rnd({9, 6}, t).slice(0, 2, 9).slice(1, 1, 5)}));
  v.push_back(sample("strided (every other column)", {rnd({5, 14}, t).slice(1, 0, 14, 2), rnd({7, 4}, t)}));
  v.push_back(sample("broadcast rows", {rnd({1, 7}, t).expand({5, 7}), rnd({7, 1}, t).expand({7, 4})}));
  v.push_back(sample("row times column", {rnd({1, 7}, t), rnd({7, 1}, t)}));
  v.push_back(sample("column times row", {rnd({6, 1}, t), rnd({1, 3}, t)}));
  v.push_back(sample("larger than a block", {rnd({33, 70}, t), rnd({70, 17}, t)}));
  v.push_back(sample("zero-size k", {rnd({3, 0}, t), rnd({0, 4}, t)}));
  v.push_back(sample("zero-size n", {rnd({0, 5}, t), rnd({5, 3}, t)}));
  v.push_back(sample("zero-size m", {rnd({3, 5}, t), rnd({5, 0}, t)}));
  return v;
}

std::vector<SampleInput> batch_pairs(DType t) {
  std::vector<SampleInput> v;
  v.push_back(sample("contiguous", {rnd({3, 5, 7}, t), rnd({3, 7, 4}, t)}));
  v.push_back(sample("transposed both", {rnd({3, 7, 5}, t).mT(), rnd({3, 4, 7}, t).mT()}));
  v.push_back(
      sample("batch-major transposed", {rnd({5, 3, 7}, t).transpose(0, 1), rnd({7, 3, 4}, t).permute({1, 0, 2})}));
  v.push_back(sample("broadcast batch", {rnd({1, 5, 7}, t).expand({3, 5, 7}), rnd({3, 7, 4}, t)}));
  v.push_back(sample("offset (sliced)", {rnd({4, 5, 9}, t).slice(0, 1, 4).slice(2, 1, 8), rnd({3, 7, 4}, t)}));
  v.push_back(sample("strided", {rnd({3, 5, 14}, t).slice(2, 0, 14, 2), rnd({3, 7, 4}, t)}));
  // Small enough (16 elements or fewer) for gradgradcheck: a transposed and an offset operand.
  v.push_back(sample("small, transposed", {rnd({2, 3, 2}, t).mT(), rnd({2, 3, 2}, t)}));
  v.push_back(sample("small, offset", {rnd({3, 2, 2}, t).slice(0, 1), rnd({2, 2, 3}, t)}));
  v.push_back(sample("larger than a block", {rnd({2, 20, 70}, t), rnd({2, 70, 9}, t)}));
  v.push_back(sample("zero-size k", {rnd({2, 3, 0}, t), rnd({2, 0, 4}, t)}));
  v.push_back(sample("zero-size batch", {rnd({0, 3, 5}, t), rnd({0, 5, 4}, t)}));
  return v;
}

std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }

ErrorInput bad(std::string label, std::vector<Tensor> tensors, const std::type_info* error,
               std::vector<std::string> needles, std::vector<double> scalars = {}) {
  return {sample(std::move(label), std::move(tensors), std::move(scalars)), error, std::move(needles)};
}

OpInfo product_entry(std::string name, std::vector<std::string> schemas) {
  OpInfo info;
  info.name = std::move(name);
  info.family = OpFamily::Linalg;
  info.schemas = std::move(schemas);
  info.dtypes = kProductDtypes;
  info.differentiable = true;
  info.tolerance = product_tolerance;
  return info;
}

// The integral scalars an integral addmm needs, fractional ones for floating dtypes.
std::vector<double> scalars_for(DType t, double beta, double alpha) {
  if (!is_floating(t)) return {std::round(beta), std::round(alpha)};
  return {beta, alpha};
}

// A sample's scalar as the op receives it: integral (an int64 Scalar) for integral tensors when
// it is a whole number, so only deliberately fractional values reach an integral op as floats.
Scalar scalar_arg(double v, const Tensor& t) {
  if (!is_floating(t.dtype()) && v == std::round(v)) return Scalar(static_cast<int64_t>(v));
  return Scalar(v);
}

}  // namespace

ANATOMY_REGISTER_OPS(linalg) {
  std::vector<OpInfo> ops;

  OpInfo mm_info = product_entry("mm", {"mm", "mm.out"});
  mm_info.notes = "int8 x int8 returns int32";
  mm_info.samples = matrix_pairs;
  mm_info.op = [](const SampleInput& s) { return one(mm(s.tensors[0], s.tensors[1])); };
  mm_info.out = [](const Tensor& o, const SampleInput& s) { mm_out(o, s.tensors[0], s.tensors[1]); };
  mm_info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    return std::vector<RefTensor>{ref_matmul(in[0], in[1], product_of(in[0].dtype))};
  };
  mm_info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("inner sizes differ", {randn({2, 3}), randn({4, 5})}, &typeid(ValueError), {"mm", "[2, 3]", "[4, 5]"}),
        bad("1-D operand", {randn({3}), randn({3, 2})}, &typeid(ValueError), {"mm", "[3]", "[3, 2]"}),
        bad("3-D operand", {randn({2, 2, 3}), randn({3, 2})}, &typeid(ValueError), {"mm", "[2, 2, 3]"}),
        bad("dtypes differ", {randn({2, 3}), randn({3, 2}, DType::Float64)}, &typeid(TypeError),
            {"mm", "fp32", "fp64"}),
        bad("int8 with int32", {zeros({2, 3}, DType::Int8), zeros({3, 2}, DType::Int32)}, &typeid(TypeError),
            {"mm", "int8", "int32"}),
        bad("bool operands", {zeros({2, 3}, DType::Bool), zeros({3, 2}, DType::Bool)}, &typeid(TypeError),
            {"mm", "bool"}),
    };
  };
  mm_info.bench_input = [](int64_t numel) {
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(std::sqrt(static_cast<double>(numel))));
    SampleInput s;
    s.tensors = {randn({n, n}), randn({n, n})};
    return s;
  };
  ops.push_back(mm_info);

  OpInfo bmm_info = product_entry("bmm", {"bmm", "bmm.out"});
  bmm_info.notes = "int8 x int8 returns int32";
  bmm_info.samples = batch_pairs;
  bmm_info.op = [](const SampleInput& s) { return one(bmm(s.tensors[0], s.tensors[1])); };
  bmm_info.out = [](const Tensor& o, const SampleInput& s) { bmm_out(o, s.tensors[0], s.tensors[1]); };
  bmm_info.reference = mm_info.reference;
  bmm_info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("batch sizes differ", {randn({2, 3, 4}), randn({3, 4, 5})}, &typeid(ValueError),
            {"bmm", "[2, 3, 4]", "[3, 4, 5]"}),
        bad("inner sizes differ", {randn({2, 3, 4}), randn({2, 5, 5})}, &typeid(ValueError),
            {"bmm", "[2, 3, 4]", "[2, 5, 5]"}),
        bad("2-D operands", {randn({3, 4}), randn({4, 5})}, &typeid(ValueError), {"bmm", "[3, 4]"}),
        bad("dtypes differ", {randn({2, 3, 4}, DType::Float16), randn({2, 4, 5})}, &typeid(TypeError),
            {"bmm", "fp16", "fp32"}),
    };
  };
  bmm_info.bench_input = [](int64_t numel) {
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(std::sqrt(static_cast<double>(numel) / 8)));
    SampleInput s;
    s.tensors = {randn({8, n, n}), randn({8, n, n})};
    return s;
  };
  ops.push_back(bmm_info);

  OpInfo matmul_info = product_entry("matmul", {"matmul"});
  matmul_info.notes = "NumPy rules: 1-D promotion, batch broadcast";
  matmul_info.samples = [](DType t) {
    std::vector<SampleInput> v;
    v.push_back(sample("1-D . 1-D", {rnd({7}, t), rnd({7}, t)}));
    v.push_back(sample("2-D @ 1-D", {rnd({5, 7}, t), rnd({7}, t)}));
    v.push_back(sample("1-D @ 2-D", {rnd({7}, t), rnd({7, 4}, t)}));
    v.push_back(sample("2-D @ 2-D transposed", {rnd({7, 5}, t).t(), rnd({7, 4}, t)}));
    v.push_back(sample("3-D @ 2-D (rows folded)", {rnd({2, 3, 7}, t), rnd({7, 4}, t)}));
    v.push_back(sample("3-D transposed @ 2-D", {rnd({3, 2, 7}, t).transpose(0, 1), rnd({4, 7}, t).t()}));
    v.push_back(sample("3-D @ 1-D", {rnd({2, 3, 7}, t), rnd({7}, t)}));
    v.push_back(sample("1-D @ 3-D", {rnd({7}, t), rnd({2, 7, 4}, t)}));
    v.push_back(sample("2-D @ 3-D", {rnd({5, 7}, t), rnd({2, 7, 4}, t)}));
    v.push_back(sample("3-D @ 3-D", {rnd({2, 5, 7}, t), rnd({2, 7, 4}, t)}));
    v.push_back(sample("broadcast batch", {rnd({2, 1, 5, 7}, t), rnd({3, 7, 4}, t)}));
    v.push_back(sample("expanded batch", {rnd({1, 5, 7}, t).expand({3, 5, 7}), rnd({3, 7, 4}, t).mT().mT()}));
    v.push_back(sample("4-D transposed", {rnd({2, 3, 7, 5}, t).mT(), rnd({2, 3, 7, 4}, t)}));
    v.push_back(sample("zero-size k", {rnd({2, 3, 0}, t), rnd({0, 4}, t)}));
    v.push_back(sample("zero-size batch", {rnd({0, 3, 5}, t), rnd({5, 4}, t)}));
    v.push_back(sample("zero-size vectors", {rnd({0}, t), rnd({0}, t)}));
    return v;
  };
  matmul_info.op = [](const SampleInput& s) { return one(matmul(s.tensors[0], s.tensors[1])); };
  matmul_info.reference = mm_info.reference;
  matmul_info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("0-dim operand", {randn({}), randn({3})}, &typeid(ValueError), {"matmul", "[]", "[3]"}),
        bad("inner sizes differ", {randn({2, 3, 4}), randn({5, 6})}, &typeid(ValueError),
            {"matmul", "[2, 3, 4]", "[5, 6]"}),
        bad("1-D lengths differ", {randn({3}), randn({4})}, &typeid(ValueError), {"matmul", "[3]", "[4]"}),
        bad("batch dims do not broadcast", {randn({2, 3, 4}), randn({3, 4, 5})}, &typeid(ValueError), {"matmul"}),
        bad("dtypes differ", {randn({2, 3}), randn({3}, DType::Float64)}, &typeid(TypeError),
            {"matmul", "fp32", "fp64"}),
    };
  };
  matmul_info.bench_input = [](int64_t numel) {
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(std::sqrt(static_cast<double>(numel) / 4)));
    SampleInput s;
    s.tensors = {randn({4, n, n}), randn({n, n})};
    return s;
  };
  ops.push_back(matmul_info);

  OpInfo addmm_info = product_entry("addmm", {"addmm"});
  addmm_info.notes = "beta = 0 ignores self (NaN included)";
  addmm_info.samples = [](DType t) {
    std::vector<SampleInput> v;
    for (SampleInput s : matrix_pairs(t)) {
      const int64_t n = s.tensors[0].size(0), m = s.tensors[1].size(1);
      s.tensors.insert(s.tensors.begin(), rnd({n, m}, t));
      s.scalars = scalars_for(t, 1, 1);
      v.push_back(s);
    }
    v.push_back(
        sample("row bias, beta and alpha", {rnd({4}, t), rnd({5, 7}, t), rnd({7, 4}, t)}, scalars_for(t, 0.5, 2)));
    v.push_back(
        sample("column bias", {rnd({5, 1}, t), rnd({5, 7}, t).t().t(), rnd({4, 7}, t).t()}, scalars_for(t, 3, -1)));
    v.push_back(sample("0-dim self", {rnd({}, t), rnd({5, 7}, t), rnd({7, 4}, t)}, scalars_for(t, 2, 1)));
    v.push_back(
        sample("zero-size k is beta * self", {rnd({3, 4}, t), rnd({3, 0}, t), rnd({0, 4}, t)}, scalars_for(t, 3, 2)));
    v.push_back(sample("beta = 0", {rnd({5, 4}, t), rnd({5, 7}, t), rnd({7, 4}, t)}, scalars_for(t, 0, 2)));
    if (is_floating(t)) {
      Tensor nan_self = full({5, 4}, std::numeric_limits<double>::quiet_NaN(), t);
      v.push_back(sample("beta = 0 ignores NaN in self", {nan_self, rnd({5, 7}, t), rnd({7, 4}, t)}, {0, 1}));
      v.push_back(sample("NaN in self propagates", {nan_self, rnd({5, 7}, t), rnd({7, 4}, t)}, {1, 1}));
    }
    return v;
  };
  addmm_info.op = [](const SampleInput& s) {
    return one(addmm(s.tensors[0], s.tensors[1], s.tensors[2], scalar_arg(s.scalars[0], s.tensors[1]),
                     scalar_arg(s.scalars[1], s.tensors[1])));
  };
  addmm_info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor p = ref_matmul(in[1], in[2], product_of(in[1].dtype));
    return std::vector<RefTensor>{ref_add_scaled(in[0], p, s.scalars[0], s.scalars[1])};
  };
  addmm_info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("self does not broadcast", {randn({3}), randn({2, 3}), randn({3, 4})}, &typeid(ValueError),
            {"addmm", "[3]"}, {1, 1}),
        bad("inner sizes differ", {randn({2, 4}), randn({2, 3}), randn({4, 4})}, &typeid(ValueError),
            {"addmm", "[2, 3]", "[4, 4]"}, {1, 1}),
        bad("self dtype differs", {randn({2, 4}, DType::Float64), randn({2, 3}), randn({3, 4})}, &typeid(TypeError),
            {"addmm", "fp64", "fp32"}, {1, 1}),
        bad("fractional alpha for integers",
            {zeros({2, 4}, DType::Int32), zeros({2, 3}, DType::Int32), zeros({3, 4}, DType::Int32)}, &typeid(TypeError),
            {"addmm", "alpha"}, {1, 0.5}),
    };
  };
  ops.push_back(addmm_info);

  OpInfo act_info = product_entry("_addmm_activation", {"_addmm_activation"});
  act_info.notes = "relu(addmm), or gelu(addmm, approximate='tanh') with use_gelu";
  // scalars: beta, alpha, use_gelu (0 or 1). gelu takes floating dtypes only.
  act_info.samples = [](DType t) {
    std::vector<SampleInput> v;
    for (const double gelu : {0.0, 1.0}) {
      if (gelu == 1.0 && !is_floating(t)) continue;
      auto add = [&](std::string label, std::vector<Tensor> tensors, double beta, double alpha) {
        std::vector<double> sc = scalars_for(t, beta, alpha);
        sc.push_back(gelu);
        v.push_back(sample(std::move(label) + (gelu == 1.0 ? ", gelu" : ", relu"), std::move(tensors), sc));
      };
      // The fused case on CUDA: a bias vector, beta 1.
      add("bias vector", {rnd({8}, t), rnd({6, 8}, t), rnd({8, 8}, t)}, 1, 1);
      add("bias vector, transposed weight (linear)", {rnd({8}, t), rnd({6, 12}, t), rnd({8, 12}, t).t()}, 1, 1);
      add("bias vector, alpha", {rnd({4}, t), rnd({5, 7}, t), rnd({7, 4}, t)}, 1, 2);
      add("bias vector, larger than a block", {rnd({17}, t), rnd({33, 70}, t), rnd({70, 17}, t)}, 1, 1);
      add("bias vector, transposed input", {rnd({8}, t), rnd({12, 6}, t).t(), rnd({12, 8}, t)}, 1, 1);
      // The others: a full self, beta != 1, an offset bias, one row, zero sizes.
      add("full self", {rnd({5, 4}, t), rnd({5, 7}, t), rnd({7, 4}, t)}, 1, 1);
      add("column bias, beta and alpha", {rnd({5, 1}, t), rnd({5, 7}, t), rnd({4, 7}, t).t()}, 0.5, 2);
      add("offset bias", {rnd({9}, t).slice(0, 1, 9), rnd({6, 8}, t), rnd({8, 8}, t)}, 1, 1);
      add("one row", {rnd({4}, t), rnd({1, 7}, t), rnd({7, 4}, t)}, 1, 1);
      add("beta = 0", {rnd({4}, t), rnd({5, 7}, t), rnd({7, 4}, t)}, 0, 1);
      add("zero-size k", {rnd({3, 4}, t), rnd({3, 0}, t), rnd({0, 4}, t)}, 1, 1);
      add("zero-size n", {rnd({4}, t), rnd({0, 5}, t), rnd({5, 4}, t)}, 1, 1);
    }
    return v;
  };
  act_info.op = [](const SampleInput& s) {
    return one(_addmm_activation(s.tensors[0], s.tensors[1], s.tensors[2], scalar_arg(s.scalars[0], s.tensors[1]),
                                 scalar_arg(s.scalars[1], s.tensors[1]), s.scalars[2] != 0));
  };
  act_info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor p = ref_matmul(in[1], in[2], product_of(in[1].dtype));
    const RefTensor pre = ref_add_scaled(in[0], p, s.scalars[0], s.scalars[1]);
    if (s.scalars[2] == 0)
      return std::vector<RefTensor>{map_unary(pre, pre.dtype, [](double x) { return x < 0 ? 0 : x; })};
    // gelu's tanh approximation, as the op computes it.
    return std::vector<RefTensor>{map_unary(pre, pre.dtype, [](double x) {
      const double kSqrt2OverPi = 0.79788456080286535588;
      return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    })};
  };
  act_info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("self does not broadcast", {randn({3}), randn({2, 3}), randn({3, 4})}, &typeid(ValueError),
            {"addmm", "[3]"}, {1, 1, 0}),
        bad("inner sizes differ", {randn({4}), randn({2, 3}), randn({4, 4})}, &typeid(ValueError),
            {"addmm", "[2, 3]", "[4, 4]"}, {1, 1, 1}),
        bad("self dtype differs", {randn({4}, DType::Float64), randn({2, 3}), randn({3, 4})}, &typeid(TypeError),
            {"addmm", "fp64", "fp32"}, {1, 1, 0}),
    };
  };
  act_info.bench_input = [](int64_t numel) {
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(std::sqrt(static_cast<double>(numel))));
    SampleInput s;
    s.tensors = {randn({n}), randn({n, n}), randn({n, n}).t()};
    s.scalars = {1, 1, 0};
    return s;
  };
  ops.push_back(act_info);

  OpInfo baddbmm_info = product_entry("baddbmm", {"baddbmm"});
  baddbmm_info.notes = "beta = 0 ignores self (NaN included)";
  baddbmm_info.samples = [](DType t) {
    std::vector<SampleInput> v;
    for (SampleInput s : batch_pairs(t)) {
      const int64_t b = s.tensors[0].size(0), n = s.tensors[0].size(1), m = s.tensors[1].size(2);
      s.tensors.insert(s.tensors.begin(), rnd({b, n, m}, t));
      s.scalars = scalars_for(t, 1, 1);
      v.push_back(s);
    }
    v.push_back(sample("broadcast self, beta and alpha", {rnd({5, 1}, t), rnd({3, 5, 7}, t), rnd({3, 7, 4}, t)},
                       scalars_for(t, 0.5, 2)));
    v.push_back(sample("zero-size k is beta * self", {rnd({2, 3, 4}, t), rnd({2, 3, 0}, t), rnd({2, 0, 4}, t)},
                       scalars_for(t, 3, 2)));
    if (is_floating(t)) {
      Tensor nan_self = full({3, 5, 4}, std::numeric_limits<double>::quiet_NaN(), t);
      v.push_back(sample("beta = 0 ignores NaN in self", {nan_self, rnd({3, 5, 7}, t), rnd({3, 7, 4}, t)}, {0, 1}));
    }
    return v;
  };
  baddbmm_info.op = [](const SampleInput& s) {
    return one(baddbmm(s.tensors[0], s.tensors[1], s.tensors[2], scalar_arg(s.scalars[0], s.tensors[1]),
                       scalar_arg(s.scalars[1], s.tensors[1])));
  };
  baddbmm_info.reference = addmm_info.reference;
  baddbmm_info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("self does not broadcast", {randn({2, 3}), randn({2, 3, 4}), randn({2, 4, 5})}, &typeid(ValueError),
            {"baddbmm", "[2, 3]"}, {1, 1}),
        bad("batch sizes differ", {randn({3, 5}), randn({2, 3, 4}), randn({3, 4, 5})}, &typeid(ValueError),
            {"baddbmm", "[2, 3, 4]", "[3, 4, 5]"}, {1, 1}),
    };
  };
  ops.push_back(baddbmm_info);

  OpInfo linear_info = product_entry("linear", {"linear"});
  linear_info.notes = "input @ weight^T + bias";
  linear_info.samples = [](DType t) {
    std::vector<SampleInput> v;
    v.push_back(sample("2-D with bias", {rnd({5, 7}, t), rnd({4, 7}, t), rnd({4}, t)}));
    v.push_back(sample("3-D with bias", {rnd({2, 3, 7}, t), rnd({4, 7}, t), rnd({4}, t)}));
    v.push_back(sample("no bias", {rnd({5, 7}, t), rnd({4, 7}, t), Tensor()}));
    v.push_back(sample("1-D input", {rnd({7}, t), rnd({4, 7}, t), rnd({4}, t)}));
    v.push_back(sample("transposed weight, non-contiguous input",
                       {rnd({3, 2, 7}, t).transpose(0, 1), rnd({7, 4}, t).t(), rnd({4}, t)}));
    v.push_back(sample("zero-size batch", {rnd({0, 7}, t), rnd({4, 7}, t), rnd({4}, t)}));
    v.push_back(sample("zero in_features", {rnd({3, 0}, t), rnd({4, 0}, t), rnd({4}, t)}));
    return v;
  };
  linear_info.op = [](const SampleInput& s) {
    std::optional<Tensor> bias;
    if (s.tensors[2].defined()) bias = s.tensors[2];
    return one(linear(s.tensors[0], s.tensors[1], bias));
  };
  linear_info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    RefTensor out = ref_matmul(in[0], ref_transpose(in[1]), product_of(in[0].dtype));
    if (s.tensors[2].defined()) out = ref_add_scaled(in[2], out, 1, 1);
    return std::vector<RefTensor>{out};
  };
  linear_info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("features differ", {randn({2, 3}), randn({4, 5}), Tensor()}, &typeid(ValueError),
            {"linear", "[2, 3]", "[4, 5]"}),
        bad("bias dtype differs", {randn({2, 3}), randn({4, 3}), randn({4}, DType::Float64)}, &typeid(TypeError),
            {"linear", "fp64"}),
        bad("3-D weight", {randn({2, 3}), randn({1, 4, 3}), Tensor()}, &typeid(ValueError), {"linear", "[1, 4, 3]"}),
    };
  };
  ops.push_back(linear_info);

  OpInfo dot_info = product_entry("dot", {"dot"});
  dot_info.notes = "int8 . int8 returns int32";
  dot_info.samples = [](DType t) {
    std::vector<SampleInput> v;
    v.push_back(sample("contiguous", {rnd({7}, t), rnd({7}, t)}));
    v.push_back(sample("strided and offset", {rnd({15}, t).slice(0, 1, 15, 2), rnd({9}, t).slice(0, 2, 9)}));
    v.push_back(sample("long", {rnd({70}, t), rnd({70}, t)}));
    v.push_back(sample("zero-size", {rnd({0}, t), rnd({0}, t)}));
    return v;
  };
  dot_info.op = [](const SampleInput& s) { return one(dot(s.tensors[0], s.tensors[1])); };
  dot_info.reference = mm_info.reference;
  dot_info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("lengths differ", {randn({3}), randn({4})}, &typeid(ValueError), {"dot", "[3]", "[4]"}),
        bad("2-D operand", {randn({2, 3}), randn({3})}, &typeid(ValueError), {"dot", "[2, 3]"}),
        bad("dtypes differ", {randn({3}), randn({3}, DType::Float64)}, &typeid(TypeError), {"dot", "fp32", "fp64"}),
    };
  };
  ops.push_back(dot_info);

  OpInfo outer_info = product_entry("outer", {"outer"});
  outer_info.notes = "element-wise: mul's promotion, bool allowed";
  outer_info.dtypes = kAll;
  outer_info.tolerance = nullptr;  // one product per element: default tolerances
  outer_info.samples = [](DType t) {
    std::vector<SampleInput> v;
    v.push_back(sample("contiguous", {rnd({5}, t), rnd({4}, t)}));
    v.push_back(sample("strided and offset", {rnd({11}, t).slice(0, 1, 11, 2), rnd({6}, t).slice(0, 2)}));
    v.push_back(sample("zero-size", {rnd({0}, t), rnd({3}, t)}));
    v.push_back(sample("mixed dtypes", {rnd({5}, t), rnd({4}, DType::Float64)}));
    return v;
  };
  outer_info.op = [](const SampleInput& s) { return one(outer(s.tensors[0], s.tensors[1])); };
  outer_info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType t = promoted_dtype(s.tensors);
    RefTensor out({in[0].shape[0], in[1].shape[0]}, t);
    for (int64_t i = 0; i < in[0].shape[0]; ++i)
      for (int64_t j = 0; j < in[1].shape[0]; ++j)
        out.at({i, j}) = round_to(in[0].data[i], t) * round_to(in[1].data[j], t);
    return std::vector<RefTensor>{out};
  };
  outer_info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("2-D operand", {randn({2, 3}), randn({3})}, &typeid(ValueError), {"outer", "[2, 3]", "[3]"}),
    };
  };
  ops.push_back(outer_info);
  return ops;
}

}  // namespace anatomy::testing
