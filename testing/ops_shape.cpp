// Op-table entries: reordering (repeat, flip, roll, tril, triu, constant_pad_nd, pad with the
// reflect, replicate and circular modes), sorting (sort, argsort, topk) and one_hot (the scans
// are in ops_scans.cpp). The references index RefTensors with plain loops; the sort reference is
// its own stable sort with PyTorch's NaN order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "anatomy/testing/shape_samples.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kNumeric = {DType::UInt8,   DType::Int8,     DType::Int32,   DType::Int64,
                                     DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// ---- reordering ----

OpInfo repeat_entry() {
  OpInfo info;
  info.name = "repeat";
  info.family = OpFamily::Indexing;
  info.schemas = {"repeat"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        sample("contiguous", laid_out("contiguous", {2, 3}, t), {2, 3}),
        sample("transposed, more repeats than dims", laid_out("transposed", {3, 2}, t), {2, 1, 2}),
        sample("offset", laid_out("offset", {2, 3}, t), {3, 1}),
        sample("0-dim", random_tensor({}, t), {2, 3}),
        sample("0-dim, no repeats", random_tensor({}, t), {}),
        sample("zero-size", random_tensor({0, 3}, t), {2, 2}),
        sample("zero repeats", random_tensor({2, 3}, t), {0, 2}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].repeat(s.dims)}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    const int64_t lead = static_cast<int64_t>(s.dims.size()) - a.dim();
    Shape shape;
    for (size_t i = 0; i < s.dims.size(); ++i) {
      shape.push_back(s.dims[i] * (static_cast<int64_t>(i) < lead ? 1 : a.shape[i - lead]));
    }
    RefTensor out(shape, a.dtype);
    for_each_index(shape, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> src;
      for (int64_t d = 0; d < a.dim(); ++d) src.push_back(idx[d + lead] % a.shape[d]);
      out.at(idx) = a.at(src);
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("fewer repeats than dims", randn({2, 3}), typeid(ValueError), {"repeat", "2"}, {2}),
        bad("negative repeat", randn({2, 3}), typeid(ValueError), {"repeat", "-1"}, {1, -1}),
    };
  };
  info.bench_input = [](int64_t n) {
    SampleInput s;
    s.tensors = {randn({std::max<int64_t>(n / 4, 1)})};
    s.dims = {2, 2};
    return s;
  };
  return info;
}

OpInfo flip_entry() {
  OpInfo info;
  info.name = "flip";
  info.family = OpFamily::Indexing;
  info.schemas = {"flip"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        sample("contiguous", laid_out("contiguous", {3, 4, 5}, t), {0, 2}),
        sample("transposed", laid_out("transposed", {4, 5}, t), {-1}),
        sample("offset", laid_out("offset", {3, 6}, t), {0, 1}),
        sample("no dims", laid_out("contiguous", {3, 2}, t), {}),
        sample("0-dim", random_tensor({}, t), {0}),
        sample("zero-size", random_tensor({0, 3}, t), {0}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].flip(s.dims)}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    std::vector<bool> flipped(a.shape.size(), false);
    for (int64_t d : s.dims) {
      if (a.dim() > 0) flipped[wrap(d, a.dim())] = true;
    }
    RefTensor out(a.shape, a.dtype);
    for_each_index(a.shape, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> src = idx;
      for (size_t d = 0; d < src.size(); ++d) {
        if (flipped[d]) src[d] = a.shape[d] - 1 - src[d];
      }
      out.at(idx) = a.at(src);
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("dim out of range", randn({2, 3}), typeid(IndexError), {"flip", "2"}, {2}),
        bad("repeated dim", randn({2, 3}), typeid(ValueError), {"flip", "more than once"}, {1, -1}),
    };
  };
  info.bench_input = [](int64_t n) {
    SampleInput s;
    s.tensors = {randn({n})};
    s.dims = {0};
    return s;
  };
  return info;
}

// ints = shifts, dims = dims.
OpInfo roll_entry() {
  OpInfo info;
  info.name = "roll";
  info.family = OpFamily::Indexing;
  info.schemas = {"roll"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        sample("contiguous", laid_out("contiguous", {4, 5}, t), {1}, {2}),
        sample("two dims, negative and wrapping shifts", laid_out("contiguous", {4, 5}, t), {0, 1}, {-3, 7}),
        sample("same dim twice", laid_out("contiguous", {4, 5}, t), {1, 1}, {1, 2}),
        sample("transposed, flattened", laid_out("transposed", {3, 4}, t), {}, {5}),
        sample("offset", laid_out("offset", {3, 4}, t), {0}, {-1}),
        sample("0-dim", random_tensor({}, t), {}, {3}),
        sample("zero-size", random_tensor({0, 4}, t), {1}, {2}),
        sample("zero-size, flattened", random_tensor({3, 0}, t), {}, {1}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].roll(s.ints, s.dims)}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    RefTensor cur = in[0];
    if (s.dims.empty()) {
      // Rolling the flattened values.
      const int64_t n = cur.numel();
      RefTensor out = cur;
      for (int64_t i = 0; i < n; ++i) out.data[(((i + s.ints[0]) % n) + n) % n] = cur.data[i];
      return std::vector<RefTensor>{out};
    }
    for (size_t k = 0; k < s.dims.size(); ++k) {
      const int64_t d = wrap(s.dims[k], cur.dim());
      const int64_t n = cur.shape[d];
      RefTensor next = cur;
      for_each_index(cur.shape, [&](const std::vector<int64_t>& idx) {
        std::vector<int64_t> dst = idx;
        dst[d] = (((idx[d] + s.ints[k]) % n) + n) % n;
        next.at(dst) = cur.at(idx);
      });
      cur = next;
    }
    return std::vector<RefTensor>{cur};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("dim out of range", randn({2, 3}), typeid(IndexError), {"roll", "-3"}, {-3}, {1}),
        bad("shifts and dims differ in length", randn({2, 3}), typeid(ValueError), {"roll", "align"}, {0, 1}, {1}),
        bad("two shifts without dims", randn({2, 3}), typeid(ValueError), {"roll", "one value"}, {}, {1, 2}),
    };
  };
  info.bench_input = [](int64_t n) {
    SampleInput s;
    s.tensors = {randn({n})};
    s.dims = {0};
    s.ints = {n / 3};
    return s;
  };
  return info;
}

// ints = {diagonal}.
OpInfo triangle_entry(bool upper) {
  OpInfo info;
  info.name = upper ? "triu" : "tril";
  info.family = OpFamily::Indexing;
  info.schemas = {info.name, info.name + "_"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        sample("contiguous", laid_out("contiguous", {4, 5}, t), {}, {0}),
        sample("diagonal 1", laid_out("contiguous", {4, 5}, t), {}, {1}),
        sample("diagonal -2", laid_out("contiguous", {5, 4}, t), {}, {-2}),
        sample("diagonal beyond the matrix", laid_out("contiguous", {3, 3}, t), {}, {10}),
        sample("diagonal below the matrix", laid_out("contiguous", {3, 3}, t), {}, {-10}),
        sample("batched, transposed", laid_out("transposed", {2, 3, 4}, t), {}, {0}),
        sample("offset", laid_out("offset", {3, 4}, t), {}, {-1}),
        sample("zero-size", random_tensor({0, 3}, t), {}, {0}),
        sample("zero-size batch", random_tensor({0, 2, 2}, t), {}, {0}),
    };
  };
  info.op = [upper](const SampleInput& s) {
    return std::vector<Tensor>{upper ? s.tensors[0].triu(s.ints[0]) : s.tensors[0].tril(s.ints[0])};
  };
  info.inplace = [upper](const SampleInput& s) {
    if (upper) {
      s.tensors[0].triu_(s.ints[0]);
    } else {
      s.tensors[0].tril_(s.ints[0]);
    }
  };
  info.reference = [upper](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    RefTensor out(a.shape, a.dtype);
    const size_t n = a.shape.size();
    for_each_index(a.shape, [&](const std::vector<int64_t>& idx) {
      const int64_t offset = idx[n - 1] - idx[n - 2];
      const bool keep = upper ? offset >= s.ints[0] : offset <= s.ints[0];
      out.at(idx) = keep ? a.at(idx) : 0.0;
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [name = info.name] {
    return std::vector<ErrorInput>{
        bad("1-dim input", randn({4}), typeid(ValueError), {name, "2 dims"}, {}, {0}),
        bad("0-dim input", randn({}), typeid(ValueError), {name, "2 dims"}, {}, {0}),
    };
  };
  info.bench_input = [](int64_t n) {
    SampleInput s;
    const int64_t side = std::max<int64_t>(1, static_cast<int64_t>(std::sqrt(static_cast<double>(n))));
    s.tensors = {randn({side, side})};
    s.ints = {0};
    return s;
  };
  return info;
}

// dims = pad, scalars = {value}.
OpInfo pad_entry() {
  OpInfo info;
  info.name = "constant_pad_nd";
  info.family = OpFamily::Indexing;
  info.schemas = {"constant_pad_nd"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        sample("contiguous", laid_out("contiguous", {3, 4}, t), {1, 2}, {}, {0}),
        sample("two dims", laid_out("contiguous", {3, 4}, t), {1, 1, 2, 0}, {}, {2}),
        sample("negative pads crop", laid_out("contiguous", {3, 4}, t), {-1, 2}, {}, {2}),
        sample("crop and pad", laid_out("transposed", {3, 4}, t), {-1, -1, 1, 0}, {}, {1}),
        sample("offset", laid_out("offset", {2, 3, 4}, t), {0, 1, 1, 0, 1, 1}, {}, {2}),
        sample("crop to nothing", laid_out("contiguous", {3, 4}, t), {-2, -2}, {}, {1}),
        sample("pad beyond a full crop", laid_out("contiguous", {3, 4}, t), {2, -5}, {}, {1}),
        sample("0-dim, no pad", random_tensor({}, t), {}, {}, {1}),
        sample("zero-size", random_tensor({0, 3}, t), {1, 1, 1, 1}, {}, {2}),
    };
  };
  info.op = [](const SampleInput& s) {
    const Scalar value =
        s.tensors[0].dtype() == DType::Bool ? Scalar(s.scalars[0] != 0) : Scalar(static_cast<int64_t>(s.scalars[0]));
    return std::vector<Tensor>{constant_pad_nd(s.tensors[0], s.dims, value)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    const int64_t n = a.dim();
    std::vector<int64_t> left(n, 0);
    Shape shape = a.shape;
    for (size_t i = 0; i < s.dims.size() / 2; ++i) {
      const int64_t d = n - 1 - static_cast<int64_t>(i);
      left[d] = s.dims[2 * i];
      shape[d] += s.dims[2 * i] + s.dims[2 * i + 1];
    }
    RefTensor out(shape, a.dtype, s.scalars[0] != 0 && a.dtype == DType::Bool ? 1.0 : s.scalars[0]);
    for_each_index(shape, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> src = idx;
      for (int64_t d = 0; d < n; ++d) {
        src[d] -= left[d];
        if (src[d] < 0 || src[d] >= a.shape[d]) return;
      }
      out.at(idx) = a.at(src);
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("odd pad length", randn({2, 3}), typeid(ValueError), {"constant_pad_nd", "3"}, {1, 1, 1}, {}, {0}),
        bad("more pads than dims", randn({3}), typeid(ValueError), {"constant_pad_nd", "2 dims"}, {1, 1, 1, 1}, {},
            {0}),
        bad("negative result size", randn({2, 3}), typeid(ValueError), {"constant_pad_nd", "-1"}, {-2, -2}, {}, {0}),
        bad("value out of the dtype's range", zeros({2}, DType::Int8), typeid(ValueError), {"constant_pad_nd", "300"},
            {1, 1}, {}, {300}),
    };
  };
  info.bench_input = [](int64_t n) {
    SampleInput s;
    const int64_t side = std::max<int64_t>(1, static_cast<int64_t>(std::sqrt(static_cast<double>(n))));
    s.tensors = {randn({side, side})};
    s.dims = {1, 1, 1, 1};
    s.scalars = {0};
    return s;
  };
  return info;
}

// pad with the modes that repeat the input's values; dims = pad. The reference finds each
// output position's source with one reflection, clamp or wrap (the pads are within the sizes).
OpInfo pad_mode_entry(const std::string& mode) {
  OpInfo info;
  info.name = "pad_" + mode;
  info.family = OpFamily::Indexing;
  info.schemas = {"pad"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "mode '" + mode + "'";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        sample("last dim", laid_out("contiguous", {3, 4}, t), {2, 1}),
        sample("two dims", laid_out("contiguous", {3, 4}, t), {1, 3, 2, 0}),
        sample("transposed", laid_out("transposed", {3, 4}, t), {0, 2, 1, 1}),
        sample("offset, three dims", laid_out("offset", {2, 3, 4}, t), {1, 1, 0, 2, 1, 0}),
        sample("no pad", laid_out("contiguous", {3, 4}, t), {0, 0}),
        sample("size 1", random_tensor({2, 1}, t), {0, 0, 1, 0}),
        sample("zero-size, other dim padded", random_tensor({0, 3}, t), {1, 2}),
    };
  };
  info.op = [mode](const SampleInput& s) { return std::vector<Tensor>{pad(s.tensors[0], s.dims, mode)}; };
  info.reference = [mode](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    const int64_t n = a.dim();
    std::vector<int64_t> left(n, 0);
    Shape shape = a.shape;
    for (size_t i = 0; i < s.dims.size() / 2; ++i) {
      const int64_t d = n - 1 - static_cast<int64_t>(i);
      left[d] = s.dims[2 * i];
      shape[d] += s.dims[2 * i] + s.dims[2 * i + 1];
    }
    RefTensor out(shape, a.dtype);
    for_each_index(shape, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> src = idx;
      for (int64_t d = 0; d < n; ++d) {
        int64_t j = src[d] - left[d];
        const int64_t size = a.shape[d];
        if (mode == "reflect") j = j < 0 ? -j : j >= size ? 2 * (size - 1) - j : j;
        else if (mode == "replicate") j = std::clamp<int64_t>(j, 0, size - 1);
        else j = j < 0 ? j + size : j >= size ? j - size : j;
        src[d] = j;
      }
      out.at(idx) = a.at(src);
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [mode] {
    std::vector<ErrorInput> e = {
        bad("odd pad length", randn({2, 3}), typeid(ValueError), {"pad", "3"}, {1, 1, 1}),
        bad("more pads than dims", randn({3}), typeid(ValueError), {"pad", "1-dim"}, {1, 1, 1, 1}),
        bad("negative pad", randn({2, 3}), typeid(ValueError), {"pad", "negative", "-1"}, {-1, 1}),
        bad("empty dim padded", randn({2, 0}), typeid(ValueError), {"pad", "size 0"}, {1, 1}),
    };
    if (mode == "reflect") {
      e.push_back(bad("pad as large as the dim", randn({2, 3}), typeid(ValueError), {"pad", "reflect", "3"}, {3, 0}));
    } else if (mode == "circular") {
      e.push_back(bad("pad larger than the dim", randn({2, 3}), typeid(ValueError), {"pad", "circular", "4"}, {0, 4}));
    }
    return e;
  };
  return info;
}

// ---- sorting ----

// The stable order of one row: ascending with NaN last, or descending with NaN first; ties keep
// their input order.
std::vector<int64_t> stable_order(const std::vector<double>& row, bool descending) {
  auto less = [](double a, double b) { return a < b || (!std::isnan(a) && std::isnan(b)); };
  std::vector<int64_t> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t i, int64_t j) { return descending ? less(row[j], row[i]) : less(row[i], row[j]); });
  return order;
}

// The first k of each row's stable order along dim (in index order when !sorted): values and
// int64 indices.
std::vector<RefTensor> ref_select(const RefTensor& input, int64_t dim, int64_t k, bool descending, bool sorted) {
  const bool scalar = input.dim() == 0;
  RefTensor a = at_least_1d(input);
  const int64_t d = wrap(dim, input.dim());
  Shape shape = a.shape;
  shape[d] = k;
  RefTensor values(shape, a.dtype), indices(shape, DType::Int64);
  for_each_row(a.shape, d, [&](const std::vector<int64_t>& base) {
    std::vector<double> row;
    std::vector<int64_t> idx = base;
    for (int64_t i = 0; i < a.shape[d]; ++i) {
      idx[d] = i;
      row.push_back(a.at(idx));
    }
    std::vector<int64_t> order = stable_order(row, descending);
    order.resize(k);
    if (!sorted) std::sort(order.begin(), order.end());
    for (int64_t j = 0; j < k; ++j) {
      idx[d] = j;
      values.at(idx) = row[order[j]];
      indices.at(idx) = static_cast<double>(order[j]);
    }
  });
  if (scalar) values.shape = indices.shape = {};
  return {values, indices};
}

// ints = {dim, descending}.
std::vector<SampleInput> sort_samples(DType t) {
  std::vector<SampleInput> s = {
      sample("contiguous", laid_out("contiguous", {5, 6}, t), {}, {-1, 0}),
      sample("dim 0, descending", laid_out("contiguous", {5, 6}, t), {}, {0, 1}),
      sample("transposed", laid_out("transposed", {4, 7}, t), {}, {-1, 0}),
      sample("offset, descending", laid_out("offset", {4, 5}, t), {}, {0, 1}),
      sample("ties", with_ties({3, 9}, t), {}, {1, 0}),
      sample("ties, descending", with_ties({3, 9}, t), {}, {1, 1}),
      sample("0-dim", random_tensor({}, t), {}, {0, 0}),
      sample("zero-size", random_tensor({0, 4}, t), {}, {-1, 0}),
      sample("zero-size rows", random_tensor({3, 0}, t), {}, {-1, 1}),
      sample("large", with_ties({64, 1024}, t), {}, {-1, 1}),
  };
  if (is_floating(t)) {
    s.push_back(sample("NaN", with_nans(t), {}, {1, 0}));
    s.push_back(sample("NaN, descending", with_nans(t), {}, {1, 1}));
  }
  return s;
}

OpInfo sort_entry() {
  OpInfo info;
  info.name = "sort";
  info.family = OpFamily::Indexing;
  info.schemas = {"sort"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "always stable";
  info.samples = sort_samples;
  info.op = [](const SampleInput& s) {
    auto [values, indices] = s.tensors[0].sort(s.ints[0], s.ints[1] != 0);
    return std::vector<Tensor>{values, indices};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const int64_t n = in[0].dim() == 0 ? 1 : in[0].shape[wrap(s.ints[0], in[0].dim())];
    return ref_select(in[0], s.ints[0], n, s.ints[1] != 0, true);
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("dim out of range", randn({2, 3}), typeid(IndexError), {"sort", "2"}, {}, {2, 0})};
  };
  info.bench_input = [](int64_t n) {
    SampleInput s;
    s.tensors = {randn({std::max<int64_t>(n / 1024, 1), std::min<int64_t>(n, 1024)})};
    s.ints = {-1, 0};
    return s;
  };
  return info;
}

OpInfo argsort_entry() {
  OpInfo info;
  info.name = "argsort";
  info.family = OpFamily::Indexing;
  info.schemas = {"argsort"};
  info.dtypes = kAll;
  info.samples = sort_samples;
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].argsort(s.ints[0], s.ints[1] != 0)}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const int64_t n = in[0].dim() == 0 ? 1 : in[0].shape[wrap(s.ints[0], in[0].dim())];
    return std::vector<RefTensor>{ref_select(in[0], s.ints[0], n, s.ints[1] != 0, true)[1]};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("dim out of range", randn({2, 3}), typeid(IndexError), {"sort", "-3"}, {}, {-3, 0})};
  };
  return info;
}

// ints = {k, dim, largest, sorted}.
OpInfo topk_entry() {
  OpInfo info;
  info.name = "topk";
  info.family = OpFamily::Indexing;
  info.schemas = {"topk"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "ties: the lower index first; sorted=False: index order";
  info.samples = [](DType t) {
    std::vector<SampleInput> s = {
        sample("contiguous", laid_out("contiguous", {5, 6}, t), {}, {3, -1, 1, 1}),
        sample("smallest along dim 0", laid_out("contiguous", {5, 6}, t), {}, {2, 0, 0, 1}),
        sample("k = size", laid_out("contiguous", {5, 6}, t), {}, {6, 1, 1, 1}),
        sample("k = 0", laid_out("contiguous", {5, 6}, t), {}, {0, 1, 1, 1}),
        sample("unsorted", laid_out("contiguous", {5, 6}, t), {}, {3, 1, 1, 0}),
        sample("transposed", laid_out("transposed", {4, 7}, t), {}, {2, -1, 1, 1}),
        sample("offset", laid_out("offset", {4, 5}, t), {}, {3, 0, 0, 1}),
        sample("ties", with_ties({3, 9}, t), {}, {4, 1, 1, 1}),
        sample("ties, smallest, unsorted", with_ties({3, 9}, t), {}, {5, 1, 0, 0}),
        sample("0-dim", random_tensor({}, t), {}, {1, 0, 1, 1}),
        sample("zero-size", random_tensor({0, 4}, t), {}, {2, -1, 1, 1}),
        sample("zero-size rows", random_tensor({4, 0}, t), {}, {0, -1, 1, 1}),
        sample("large", with_ties({64, 1024}, t), {}, {10, -1, 1, 1}),
    };
    if (is_floating(t)) {
      s.push_back(sample("NaN, largest", with_nans(t), {}, {4, 1, 1, 1}));
      s.push_back(sample("NaN, smallest", with_nans(t), {}, {4, 1, 0, 1}));
    }
    return s;
  };
  info.op = [](const SampleInput& s) {
    auto [values, indices] = s.tensors[0].topk(s.ints[0], s.ints[1], s.ints[2] != 0, s.ints[3] != 0);
    return std::vector<Tensor>{values, indices};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    return ref_select(in[0], s.ints[1], s.ints[0], s.ints[2] != 0, s.ints[3] != 0);
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("k too large", randn({2, 3}), typeid(ValueError), {"topk", "4"}, {}, {4, -1, 1, 1}),
        bad("negative k", randn({2, 3}), typeid(ValueError), {"topk", "-1"}, {}, {-1, -1, 1, 1}),
        bad("dim out of range", randn({2, 3}), typeid(IndexError), {"topk", "5"}, {}, {1, 5, 1, 1}),
    };
  };
  info.bench_input = [](int64_t n) {
    SampleInput s;
    s.tensors = {randn({std::max<int64_t>(n / 1024, 1), std::min<int64_t>(n, 1024)})};
    s.ints = {1, -1, 1, 1};
    return s;
  };
  return info;
}

// ---- one_hot ----

// ints = {num_classes}.
OpInfo one_hot_entry() {
  OpInfo info;
  info.name = "one_hot";
  info.family = OpFamily::Indexing;
  info.schemas = {"one_hot"};
  info.dtypes = {DType::Int64};
  info.samples = [](DType t) {
    Domain d;
    d.int_low = 0;
    d.int_high = 4;
    return std::vector<SampleInput>{
        sample("inferred classes", laid_out("contiguous", {6}, t, d), {}, {-1}),
        sample("num_classes 5", laid_out("contiguous", {6}, t, d), {}, {5}),
        sample("transposed", laid_out("transposed", {2, 3}, t, d), {}, {4}),
        sample("offset", laid_out("offset", {2, 3}, t, d), {}, {-1}),
        sample("0-dim", tensor({2}).squeeze(0), {}, {3}),
        sample("zero-size", random_tensor({0}, t, d), {}, {3}),
        sample("zero-size, no classes", random_tensor({0, 2}, t, d), {}, {0}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{one_hot(s.tensors[0], s.ints[0])}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    int64_t classes = s.ints[0];
    if (classes < 0) classes = static_cast<int64_t>(*std::max_element(a.data.begin(), a.data.end())) + 1;
    Shape shape = a.shape;
    shape.push_back(classes);
    RefTensor out(shape, DType::Int64);
    for (int64_t i = 0; i < a.numel(); ++i) out.data[i * classes + static_cast<int64_t>(a.data[i])] = 1;
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        bad("negative class", tensor({1, -2, 0}), typeid(ValueError), {"one_hot", "-2"}, {}, {-1}),
        bad("class >= num_classes", tensor({1, 3, 0}), typeid(ValueError), {"one_hot", "3"}, {}, {3}),
        bad("float input", tensor({1.0, 2.0}), typeid(TypeError), {"one_hot", "int64"}, {}, {3}),
        bad("empty input, inferred classes", zeros({0}, DType::Int64), typeid(ValueError), {"one_hot", "empty"}, {},
            {-1}),
        bad("num_classes below -1", tensor({1}), typeid(ValueError), {"one_hot", "-2"}, {}, {-2}),
    };
  };
  return info;
}

}  // namespace

ANATOMY_REGISTER_OPS(shape) {
  return {repeat_entry(),
          flip_entry(),
          roll_entry(),
          triangle_entry(false),
          triangle_entry(true),
          pad_entry(),
          pad_mode_entry("reflect"),
          pad_mode_entry("replicate"),
          pad_mode_entry("circular"),
          sort_entry(),
          argsort_entry(),
          topk_entry(),
          one_hot_entry()};
}

}  // namespace anatomy::testing
