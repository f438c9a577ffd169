// Op-table entries: tile and repeat_interleave (its three forms). The references copy values
// between RefTensor positions with plain loops.
#include <algorithm>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kAll = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                                 DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

using Shape = std::vector<int64_t>;

Tensor counts(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return tensor(values, {n}, TensorOptions().dtype(DType::Int64));
}

// dims = the repeats.
OpInfo tile_entry() {
  OpInfo info;
  info.name = "tile";
  info.family = OpFamily::Indexing;
  info.schemas = {"tile"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "repeat with the repeats padded by leading 1s";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("as many repeats as dims", {random_tensor({2, 3}, t)}, {2, 2}),
        make_sample("fewer repeats than dims", {random_tensor({2, 3}, t).t()}, {3}),
        make_sample("more repeats than dims", {random_tensor({4}, t).slice(0, 1)}, {2, 1, 2}),
        make_sample("no repeats", {random_tensor({2, 2}, t)}, {}),
        make_sample("0-dim", {random_tensor({}, t)}, {3}),
        make_sample("zero repeats", {random_tensor({2, 3}, t)}, {0}),
        make_sample("zero-size", {random_tensor({0, 3}, t)}, {2, 1}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].tile(s.dims)}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    Shape reps = s.dims;
    while (reps.size() < a.shape.size()) reps.insert(reps.begin(), 1);
    const size_t lead = reps.size() - a.shape.size();
    Shape shape;
    for (size_t i = 0; i < reps.size(); ++i) shape.push_back(reps[i] * (i < lead ? 1 : a.shape[i - lead]));
    RefTensor out(shape, a.dtype);
    for_each_index(shape, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> src;
      for (size_t d = 0; d < a.shape.size(); ++d) src.push_back(idx[d + lead] % a.shape[d]);
      out.at(idx) = a.at(src);
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("negative repeat", {randn({2, 3})}, typeid(ValueError), {"tile", "-1"}, {1, -1}),
    };
  };
  return info;
}

// tensors = {self, repeats} (repeats undefined: ints[0] is the int repeats); dims = {dim}, or
// empty for dim=None; scalars = {output_size} when given.
OpInfo repeat_interleave_entry() {
  OpInfo info;
  info.name = "repeat_interleave";
  info.family = OpFamily::Indexing;
  info.schemas = {"repeat_interleave.self_Tensor", "repeat_interleave.self_int"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "index_select with the repeated indices; the int form expands and copies";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("tensor repeats, dim 0", {random_tensor({3, 2}, t), counts({1, 0, 3})}, {0}),
        make_sample("tensor repeats, last dim, transposed", {random_tensor({3, 2}, t).t(), counts({2, 1, 2})}, {-1}),
        make_sample("one tensor repeat broadcast, no dim", {random_tensor({2, 2}, t), counts({2})}),
        make_sample("0-dim tensor repeat, output_size", {random_tensor({2, 3}, t), counts({2}).reshape({})}, {1}, {},
                    {6}),
        make_sample("int repeats, dim 1", {random_tensor({2, 3}, t), Tensor()}, {1}, {2}),
        make_sample("int repeats, no dim, offset", {random_tensor({3, 3}, t).slice(0, 1), Tensor()}, {}, {3}),
        make_sample("int repeats, output_size", {random_tensor({4}, t), Tensor()}, {0}, {2}, {8}),
        make_sample("zero int repeats", {random_tensor({2, 3}, t), Tensor()}, {0}, {0}),
        make_sample("zero-size", {random_tensor({0, 3}, t), counts({})}, {0}),
        make_sample("0-dim input", {random_tensor({}, t), Tensor()}, {}, {3}),
    };
  };
  info.op = [](const SampleInput& s) {
    std::optional<int64_t> dim, output_size;
    if (!s.dims.empty()) dim = s.dims[0];
    if (!s.scalars.empty()) output_size = static_cast<int64_t>(s.scalars[0]);
    if (s.tensors[1].defined()) {
      return std::vector<Tensor>{s.tensors[0].repeat_interleave(s.tensors[1], dim, output_size)};
    }
    return std::vector<Tensor>{s.tensors[0].repeat_interleave(s.ints[0], dim, output_size)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    RefTensor a = in[0];
    int64_t d = 0;
    if (s.dims.empty() || a.dim() == 0) {
      a.shape = {a.numel()};
    } else {
      d = s.dims[0] < 0 ? s.dims[0] + a.dim() : s.dims[0];
    }
    const int64_t len = a.shape[d];
    std::vector<int64_t> reps(static_cast<size_t>(len), s.tensors[1].defined() ? 0 : s.ints[0]);
    if (s.tensors[1].defined()) {
      for (int64_t i = 0; i < len; ++i) {
        reps[i] = static_cast<int64_t>(in[1].numel() == 1 ? in[1].data[0] : in[1].data[i]);
      }
    }
    std::vector<int64_t> source;  // the input index along d of each result index
    for (int64_t i = 0; i < len; ++i) source.insert(source.end(), static_cast<size_t>(reps[i]), i);
    Shape shape = a.shape;
    shape[d] = static_cast<int64_t>(source.size());
    RefTensor out(shape, a.dtype);
    for_each_index(shape, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> src = idx;
      src[d] = source[idx[d]];
      out.at(idx) = a.at(src);
    });
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("negative int repeats", {randn({2, 3}), Tensor()}, typeid(ValueError), {"repeat_interleave", "-2"},
                   {0}, {-2}),
        make_error("negative tensor repeats", {randn({2, 3}), counts({1, -1})}, typeid(ValueError),
                   {"repeat_interleave", "-1", "index 1"}, {0}),
        make_error("repeats length differs", {randn({2, 3}), counts({1, 2})}, typeid(ValueError),
                   {"repeat_interleave", "2 values", "3 along dim 1"}, {1}),
        make_error("output_size differs", {randn({2, 3}), Tensor()}, typeid(ValueError),
                   {"repeat_interleave", "7", "6"}, {1}, {2}, {7}),
        make_error("2-D repeats", {randn({2, 3}), counts({1, 2, 1, 2}).reshape({2, 2})}, typeid(ValueError),
                   {"repeat_interleave", "[2, 2]"}, {0}),
        make_error("float repeats", {randn({2, 3}), randn({2})}, typeid(TypeError), {"repeat_interleave", "fp32"}, {0}),
    };
  };
  return info;
}

// The repeats-only form: tensors = {repeats}; scalars = {output_size} when given.
OpInfo repeat_interleave_indices_entry() {
  OpInfo info;
  info.name = "repeat_interleave (indices)";
  info.family = OpFamily::Indexing;
  info.schemas = {"repeat_interleave.Tensor"};
  info.dtypes = {DType::Int32, DType::Int64};
  info.notes = "reads the repeats on the host; on Meta only with output_size";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("counts", {counts({2, 0, 1, 3}).to(t)}),
        make_sample("strided, output_size", {counts({1, 9, 2, 9, 3}).to(t).slice(0, 0, 5, 2)}, {}, {}, {6}),
        make_sample("empty", {counts({}).to(t)}),
    };
  };
  info.op = [](const SampleInput& s) {
    std::optional<int64_t> output_size;
    if (!s.scalars.empty()) output_size = static_cast<int64_t>(s.scalars[0]);
    return std::vector<Tensor>{repeat_interleave(s.tensors[0], output_size)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    std::vector<double> values;
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      for (int64_t k = 0; k < static_cast<int64_t>(in[0].data[i]); ++k) values.push_back(static_cast<double>(i));
    }
    RefTensor out({static_cast<int64_t>(values.size())}, DType::Int64);
    out.data = values;
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("negative", {counts({1, -3})}, typeid(ValueError), {"repeat_interleave", "-3"}),
        make_error("0-dim", {counts({2}).reshape({})}, typeid(ValueError), {"repeat_interleave", "1-D"}),
        make_error("output_size differs", {counts({1, 2})}, typeid(ValueError), {"repeat_interleave", "4", "3"}, {}, {},
                   {4}),
    };
  };
  return info;
}

}  // namespace

ANATOMY_REGISTER_OPS(repeat) { return {tile_entry(), repeat_interleave_entry(), repeat_interleave_indices_entry()}; }

}  // namespace anatomy::testing
