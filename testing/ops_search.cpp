// Op-table entries: searchsorted and bucketize. The reference counts, with plain loops, the
// elements of each value's row that come before it (side left: those less than the value; side
// right: those not greater), with NaN after every number (Note [NaN in searchsorted] in
// dispatch/ops/sorted_search.h), after rounding both to their common dtype. A count does not
// depend on the row's order, so it checks the sorter too: the samples with a sorter search rows
// that are not sorted.
#include <cmath>
#include <limits>

#include "anatomy/core/type_promotion.h"
#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

using Shape = std::vector<int64_t>;

// Every dtype with an order (bool has none to search).
const std::vector<DType> kOrdered = {DType::UInt8,   DType::Int8,     DType::Int32,   DType::Int64,
                                     DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// ints of a sample: {out_int32, right, side, form}. side: 0 absent, 1 "left", 2 "right", 3 an
// invalid string; form: 0 a tensor of values, 1 a floating Scalar, 2 an integer Scalar
// (scalars[0]).
enum Side : int64_t { kNoSide = 0, kLeft = 1, kRight = 2, kBadSide = 3 };
enum Form : int64_t { kTensor = 0, kDoubleScalar = 1, kIntScalar = 2 };

std::optional<std::string_view> side_of(const SampleInput& s) {
  switch (s.ints[2]) {
    case kLeft:
      return "left";
    case kRight:
      return "right";
    case kBadSide:
      return "middle";
    default:
      return std::nullopt;
  }
}

Scalar scalar_of(const SampleInput& s) {
  if (s.ints[3] == kIntScalar) return Scalar(static_cast<int64_t>(s.scalars[0]));
  return Scalar(s.scalars[0]);
}

bool searches_right(const SampleInput& s) { return s.ints[2] == kRight || (s.ints[2] == kNoSide && s.ints[1] != 0); }

// The common dtype of the sequence and the values (or the Scalar), PyTorch's promotion.
DType common_dtype(const SampleInput& s, const Tensor& sequence, const Tensor& values) {
  ResultTypeState state;
  state.add_tensor(sequence.dtype());
  if (s.ints[3] != kTensor) state.add_scalar(scalar_of(s));
  else if (values.dim() == 0) state.add_zero_dim_tensor(values.dtype());
  else state.add_tensor(values.dtype());
  return state.result();
}

bool before_nan_last(double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); }

// The positions of `values` (shape `shape`, row-major) in the rows of `sequence` (1-d: one row
// for all; N-d: row r for the values of row r).
RefTensor ref_search(const RefTensor& sequence, const std::vector<double>& values, const Shape& shape, bool right,
                     DType common, DType result) {
  RefTensor out(shape, result);
  const int64_t n = sequence.shape.back();
  const int64_t m = shape.empty() ? 1 : shape.back();
  std::vector<double> rounded(sequence.data.size());
  for (size_t j = 0; j < rounded.size(); ++j) rounded[j] = round_to(sequence.data[j], common);
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = round_to(values[i], common);
    const int64_t row = sequence.dim() == 1 ? 0 : static_cast<int64_t>(i) / m;
    int64_t count = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double e = rounded[static_cast<size_t>(row * n + j)];
      count += (right ? !before_nan_last(v, e) : before_nan_last(e, v)) ? 1 : 0;
    }
    out.data[i] = static_cast<double>(count);
  }
  return out;
}

// Rows sorted along the last dim (sort's order: NaN last).
Tensor sorted_rows(Shape shape, DType t, const Domain& d = {}) {
  return std::get<0>(sort(random_tensor(std::move(shape), t, d), -1));
}

// Values drawn from a few integers, so that they meet the boundaries exactly.
Tensor repeating(Shape shape, DType t, int64_t high) {
  Domain d;
  d.int_low = 0;
  d.int_high = high;
  return random_tensor(std::move(shape), DType::Int64, d).to(t);
}

SampleInput sample(std::string label, std::vector<Tensor> tensors, std::vector<int64_t> ints = {0, 0, kNoSide, kTensor},
                   std::vector<double> scalars = {}) {
  return make_sample(std::move(label), std::move(tensors), {}, std::move(ints), std::move(scalars));
}

// The layouts both operators take: sequence (or boundaries) and values of dtype t.
std::vector<std::pair<std::string, std::pair<Tensor, Tensor>>> layouts(DType t, bool one_d_only) {
  std::vector<std::pair<std::string, std::pair<Tensor, Tensor>>> out;
  auto add = [&](std::string label, Tensor seq, Tensor values) {
    out.push_back({std::move(label), {std::move(seq), std::move(values)}});
  };
  add("1-d sequence, 2-d values", sorted_rows({9}, t), random_tensor({4, 5}, t));
  add("repeated boundaries", std::get<0>(sort(repeating({12}, t, 5))), repeating({3, 4}, t, 6));
  add("strided, offset boundaries", sorted_rows({21}, t).slice(0, 1, std::nullopt, 2),
      random_tensor({6, 8}, t).slice(1, 2));
  add("broadcast values", sorted_rows({7}, t), random_tensor({1, 5}, t).expand({4, 5}));
  add("transposed values", sorted_rows({6}, t), random_tensor({5, 3}, t).t());
  add("0-dim value", sorted_rows({8}, t), random_tensor({}, t));
  add("zero-size values", sorted_rows({5}, t), random_tensor({0, 3}, t));
  add("empty sequence", random_tensor({0}, t), random_tensor({2, 3}, t));
  add("large", sorted_rows({1000}, t), random_tensor({100, 50}, t));
  if (!one_d_only) {
    add("N-d sequence", sorted_rows({3, 4, 7}, t), random_tensor({3, 4, 5}, t));
    add("transposed sequence rows", std::get<0>(sort(random_tensor({7, 3}, t), 0)).t(), random_tensor({5, 3}, t).t());
    add("N-d sequence, repeated", std::get<0>(sort(repeating({2, 10}, t, 4), -1)), repeating({2, 6}, t, 5));
    add("N-d empty rows", random_tensor({3, 0}, t), random_tensor({3, 4}, t));
  }
  if (is_floating(t)) {
    add("NaN and infinities",
        tensor(std::vector<double>{-kInf, -1.0, 0.0, 0.0, 2.0, kInf, kNaN, kNaN}, {8}, DType::Float64).to(t),
        tensor(std::vector<double>{kNaN, kInf, -kInf, 0.0, -0.0, 2.0, 3.0, -5.0}, {2, 4}, DType::Float64).to(t));
  }
  return out;
}

OpInfo searchsorted_entry() {
  OpInfo info;
  info.name = "searchsorted";
  info.family = OpFamily::Indexing;
  info.schemas = {"searchsorted.Tensor", "searchsorted.Scalar"};
  info.dtypes = kOrdered;
  info.notes = "int64 (int32 with out_int32) positions; side overrides right; NaN sorts last; promotes mixed dtypes";
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    int64_t variant = 0;
    for (auto& [label, pair] : layouts(t, false)) {
      // Every layout both ways; the ways of asking for a side take turns.
      const int64_t right_way = variant++ % 2 == 0 ? 1 : 0;
      s.push_back(sample(label + ", left", {pair.first, pair.second}, {0, 0, variant % 3 == 0 ? kLeft : kNoSide, 0}));
      s.push_back(
          sample(label + ", right", {pair.first, pair.second}, {0, right_way, right_way != 0 ? kNoSide : kRight, 0}));
    }
    s.push_back(sample("out_int32", {sorted_rows({9}, t), random_tensor({4, 5}, t)}, {1, 0, kNoSide, kTensor}));
    s.push_back(sample("out_int32, right", {sorted_rows({2, 9}, t), random_tensor({2, 5}, t)}, {1, 1, kRight, 0}));
    // A sorter: the rows are not sorted; sorter gives their ascending order.
    const Tensor unsorted = random_tensor({10}, t);
    s.push_back(sample("sorter", {unsorted, random_tensor({3, 4}, t), argsort(unsorted)}));
    const Tensor rows = repeating({3, 8}, t, 6);
    s.push_back(sample("N-d sorter, right", {rows, repeating({3, 5}, t, 7), argsort(rows, -1)}, {0, 1, kNoSide, 0}));
    const Tensor columns = random_tensor({6, 2}, t);
    s.push_back(sample("transposed sorter", {columns.t(), random_tensor({2, 3}, t), argsort(columns, 0).t()}));
    // Scalars: a wrapped number, which promotes as a Python scalar does.
    s.push_back(sample("floating Scalar", {sorted_rows({9}, t)}, {0, 0, kNoSide, kDoubleScalar}, {1.5}));
    s.push_back(
        sample("integer Scalar, right", {std::get<0>(sort(repeating({9}, t, 4)))}, {0, 1, kNoSide, kIntScalar}, {2}));
    // Mixed dtypes promote: int64 boundaries with these values, these with fp32 values, and a
    // 0-dim fp64 value, which is weak next to the sequence.
    s.push_back(
        sample("int64 sequence", {std::get<0>(sort(repeating({9}, DType::Int64, 5))), repeating({2, 3}, t, 6)}));
    s.push_back(sample("fp32 values", {sorted_rows({9}, t), random_tensor({2, 3}, DType::Float32)}));
    s.push_back(
        sample("0-dim fp64 value", {sorted_rows({9}, t), tensor(std::vector<double>{1.0001}, {}, DType::Float64)}));
    return s;
  };
  info.op = [](const SampleInput& s) {
    std::optional<Tensor> sorter;
    if (s.tensors.size() > 2 && s.tensors[2].defined()) sorter = s.tensors[2];
    const bool out_int32 = s.ints[0] != 0, right = s.ints[1] != 0;
    if (s.ints[3] != kTensor) {
      return std::vector<Tensor>{searchsorted(s.tensors[0], scalar_of(s), out_int32, right, side_of(s), sorter)};
    }
    return std::vector<Tensor>{searchsorted(s.tensors[0], s.tensors[1], out_int32, right, side_of(s), sorter)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType result = s.ints[0] != 0 ? DType::Int32 : DType::Int64;
    const Tensor values = s.ints[3] == kTensor ? s.tensors[1] : Tensor();
    const DType common = common_dtype(s, s.tensors[0], values);
    if (s.ints[3] != kTensor)
      return std::vector<RefTensor>{ref_search(in[0], s.scalars, {}, searches_right(s), common, result)};
    return std::vector<RefTensor>{ref_search(in[0], in[1].data, in[1].shape, searches_right(s), common, result)};
  };
  info.tolerance = [](DType) { return Tolerance{0, 0}; };
  info.error_inputs = [] {
    const Tensor seq = sorted_rows({5}, DType::Float32);
    const Tensor values = random_tensor({2, 3}, DType::Float32);
    auto bad = [](std::string label, std::vector<Tensor> ts, const std::type_info& type,
                  std::vector<std::string> needles, std::vector<int64_t> ints = {0, 0, kNoSide, kTensor}) {
      return make_error(std::move(label), std::move(ts), type, std::move(needles), {}, std::move(ints));
    };
    return std::vector<ErrorInput>{
        bad("invalid side", {seq, values}, typeid(ValueError), {"searchsorted", "'middle'"}, {0, 0, kBadSide, 0}),
        bad("side left with right", {seq, values}, typeid(ValueError), {"searchsorted", "opposites"}, {0, 1, kLeft, 0}),
        bad("0-dim sequence", {random_tensor({}, DType::Float32), values}, typeid(ValueError),
            {"searchsorted", "at least 1 dim"}),
        bad("0-dim value, 2-d sequence", {sorted_rows({2, 5}, DType::Float32), random_tensor({}, DType::Float32)},
            typeid(ValueError), {"searchsorted", "scalar", "(2, 5)"}),
        bad("leading dims differ", {sorted_rows({3, 5}, DType::Float32), random_tensor({2, 4}, DType::Float32)},
            typeid(ValueError), {"searchsorted", "(3, 5)", "(2, 4)"}),
        bad("sequence of fewer dims", {sorted_rows({2, 5}, DType::Float32), random_tensor({2, 2, 4}, DType::Float32)},
            typeid(ValueError), {"searchsorted", "(2, 5)", "(2, 2, 4)"}),
        bad("bool", {tensor(std::vector<double>{0, 1}, {2}, DType::Bool), random_tensor({3}, DType::Bool)},
            typeid(TypeError), {"searchsorted", "bool"}),
        bad("sorter of another shape", {seq, values, argsort(random_tensor({4}, DType::Float32))}, typeid(ValueError),
            {"searchsorted", "sorter", "(5,)", "(4,)"}),
        bad("int32 sorter", {seq, values, argsort(seq).to(DType::Int32)}, typeid(TypeError),
            {"searchsorted", "sorter", "int64"}),
        bad("sorter entry past the row", {seq, values, tensor(std::vector<int64_t>{0, 1, 5, 3, 4}, {5})},
            typeid(IndexError), {"searchsorted (sorter)", "index 5", "size 5"}),
        bad("negative sorter entry", {seq, values, tensor(std::vector<int64_t>{0, 1, -1, 3, 4}, {5})},
            typeid(IndexError), {"searchsorted (sorter)", "index -1"}),
    };
  };
  return info;
}

OpInfo bucketize_entry() {
  OpInfo info;
  info.name = "bucketize";
  info.family = OpFamily::Indexing;
  info.schemas = {"bucketize.Tensor", "bucketize.Scalar"};
  info.dtypes = kOrdered;
  info.notes = "searchsorted(boundaries, self) with 1-d boundaries";
  // tensors: {values, boundaries}; ints as searchsorted's (side unused).
  info.samples = [](DType t) {
    std::vector<SampleInput> s;
    for (auto& [label, pair] : layouts(t, true)) {
      s.push_back(sample(label, {pair.second, pair.first}));
      s.push_back(sample(label + ", right", {pair.second, pair.first}, {0, 1, kNoSide, kTensor}));
    }
    s.push_back(sample("out_int32", {random_tensor({4, 5}, t), sorted_rows({9}, t)}, {1, 0, kNoSide, kTensor}));
    s.push_back(sample("floating Scalar", {sorted_rows({9}, t)}, {0, 0, kNoSide, kDoubleScalar}, {-0.5}));
    s.push_back(
        sample("integer Scalar, right", {std::get<0>(sort(repeating({9}, t, 4)))}, {0, 1, kNoSide, kIntScalar}, {1}));
    s.push_back(sample("int32 values", {repeating({3, 4}, DType::Int32, 5), sorted_rows({6}, t)}));
    return s;
  };
  info.op = [](const SampleInput& s) {
    const bool out_int32 = s.ints[0] != 0, right = s.ints[1] != 0;
    if (s.ints[3] != kTensor) return std::vector<Tensor>{bucketize(scalar_of(s), s.tensors[0], out_int32, right)};
    return std::vector<Tensor>{bucketize(s.tensors[0], s.tensors[1], out_int32, right)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const DType result = s.ints[0] != 0 ? DType::Int32 : DType::Int64;
    const bool right = s.ints[1] != 0;
    if (s.ints[3] != kTensor) {
      const DType common = common_dtype(s, s.tensors[0], Tensor());
      return std::vector<RefTensor>{ref_search(in[0], s.scalars, {}, right, common, result)};
    }
    const DType common = common_dtype(s, s.tensors[1], s.tensors[0]);
    return std::vector<RefTensor>{ref_search(in[1], in[0].data, in[0].shape, right, common, result)};
  };
  info.tolerance = [](DType) { return Tolerance{0, 0}; };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("2-d boundaries", {random_tensor({2, 3}, DType::Float32), sorted_rows({2, 4}, DType::Float32)},
                   typeid(ValueError), {"bucketize", "1-d", "(2, 4)"}, {}, {0, 0, kNoSide, kTensor}),
        make_error("0-dim boundaries", {random_tensor({3}, DType::Float32), random_tensor({}, DType::Float32)},
                   typeid(ValueError), {"bucketize", "1-d", "0 dims"}, {}, {0, 0, kNoSide, kTensor}),
        make_error("bool", {random_tensor({3}, DType::Bool), tensor(std::vector<double>{0, 1}, {2}, DType::Bool)},
                   typeid(TypeError), {"bucketize", "bool"}, {}, {0, 0, kNoSide, kTensor}),
    };
  };
  return info;
}

}  // namespace

ANATOMY_REGISTER_OPS(search) { return {searchsorted_entry(), bucketize_entry()}; }

}  // namespace anatomy::testing
