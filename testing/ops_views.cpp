// Op-table entries: the views composed from other views (movedim, moveaxis, swapaxes, swapdims,
// unbind, view_as, reshape_as, expand_as, broadcast_to, broadcast_tensors, meshgrid). The
// references move values between RefTensor positions with plain loops.
#include <algorithm>

#include "anatomy/testing/op_table.h"

namespace anatomy::testing {
namespace {

const std::vector<DType> kAll = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                                 DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

using Shape = std::vector<int64_t>;

// A [d0, d1, d2] tensor seen through a transpose, and one starting inside a larger storage.
Tensor transposed(Shape shape, DType t) {
  std::swap(shape[0], shape[shape.size() - 1]);
  return random_tensor(shape, t).transpose(0, -1);
}
Tensor offset(Shape shape, DType t) {
  Shape big = shape;
  big[0] += 1;
  return random_tensor(big, t).slice(0, 1);
}

int64_t wrap(int64_t d, int64_t n) { return d < 0 ? d + std::max<int64_t>(n, 1) : d; }

// The value of `a` that lands at `idx` of the result when result dim j is a's dim order[j].
RefTensor permuted(const RefTensor& a, const Shape& order) {
  Shape shape;
  for (int64_t o : order) shape.push_back(a.shape[o]);
  RefTensor out(shape, a.dtype);
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(a.shape.size());
    for (size_t j = 0; j < order.size(); ++j) src[order[j]] = idx[j];
    out.at(idx) = a.at(src);
  });
  return out;
}

// `a` broadcast to `shape` (dims aligned from the right, size-1 dims repeated).
RefTensor broadcast_ref(const RefTensor& a, const Shape& shape) {
  RefTensor out(shape, a.dtype);
  const size_t lead = shape.size() - a.shape.size();
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(a.shape.size());
    for (size_t d = 0; d < a.shape.size(); ++d) src[d] = a.shape[d] == 1 ? 0 : idx[d + lead];
    out.at(idx) = a.at(src);
  });
  return out;
}

// dims = source, ints = destination; scalars[0] = 1 calls the int form, scalars[1] = 1 moveaxis.
OpInfo movedim_entry() {
  OpInfo info;
  info.name = "movedim";
  info.family = OpFamily::Indexing;
  info.schemas = {"movedim.intlist", "movedim.int", "moveaxis.intlist", "moveaxis.int"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "a view (permute); moveaxis is its alias";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("one dim, int form", {random_tensor({2, 3, 4}, t)}, {0}, {2}, {1, 0}),
        make_sample("one dim, list form", {random_tensor({2, 3, 4}, t)}, {2}, {0}, {0, 0}),
        make_sample("two dims", {random_tensor({2, 3, 4, 5}, t)}, {0, 1}, {3, 0}, {0, 0}),
        make_sample("negative dims, moveaxis", {random_tensor({2, 3, 4}, t)}, {-1, 0}, {0, -1}, {0, 1}),
        make_sample("moveaxis int form", {random_tensor({2, 3, 4}, t)}, {1}, {-1}, {1, 1}),
        make_sample("transposed", {transposed({3, 2, 4}, t)}, {1}, {0}, {1, 0}),
        make_sample("offset", {offset({3, 2, 4}, t)}, {0, 2}, {1, 0}, {0, 0}),
        make_sample("no dims", {random_tensor({2, 3}, t)}, {}, {}, {0, 0}),
        make_sample("0-dim", {random_tensor({}, t)}, {0}, {-1}, {0, 0}),
        make_sample("zero-size", {random_tensor({0, 3, 2}, t)}, {0}, {2}, {1, 0}),
    };
  };
  info.op = [](const SampleInput& s) {
    const Tensor& x = s.tensors[0];
    const bool axis = s.scalars[1] != 0;
    if (s.scalars[0] != 0) {
      return std::vector<Tensor>{axis ? x.moveaxis(s.dims[0], s.ints[0]) : x.movedim(s.dims[0], s.ints[0])};
    }
    return std::vector<Tensor>{axis ? x.moveaxis(s.dims, s.ints) : x.movedim(s.dims, s.ints)};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    const int64_t n = a.dim();
    if (n == 0) return std::vector<RefTensor>{a};
    Shape order(n, -1);
    std::vector<bool> moved(n, false);
    for (size_t i = 0; i < s.dims.size(); ++i) {
      order[wrap(s.ints[i], n)] = wrap(s.dims[i], n);
      moved[wrap(s.dims[i], n)] = true;
    }
    int64_t next = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (order[j] != -1) continue;
      while (moved[next]) ++next;
      order[j] = next++;
    }
    return std::vector<RefTensor>{permuted(a, order)};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("repeated source", {randn({2, 3, 4})}, typeid(ValueError),
                   {"movedim", "repeated", "source", "0, -3"}, {0, -3}, {1, 2}, {0, 0}),
        make_error("repeated destination", {randn({2, 3, 4})}, typeid(ValueError), {"movedim", "destination", "2, 2"},
                   {0, 1}, {2, 2}, {0, 0}),
        make_error("lengths differ", {randn({2, 3, 4})}, typeid(ValueError), {"movedim", "2 dims", "1 dims"}, {0, 1},
                   {2}, {0, 0}),
        make_error("dim out of range", {randn({2, 3})}, typeid(IndexError), {"movedim", "3"}, {3}, {0}, {1, 0}),
    };
  };
  return info;
}

// ints = {dim0, dim1}; scalars[0] = 1 calls swapdims.
OpInfo swapaxes_entry() {
  OpInfo info;
  info.name = "swapaxes";
  info.family = OpFamily::Indexing;
  info.schemas = {"swapaxes", "swapdims"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "a view (transpose); swapdims is its alias";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("contiguous", {random_tensor({2, 3, 4}, t)}, {}, {0, 2}, {0}),
        make_sample("swapdims, negative dims", {random_tensor({2, 3, 4}, t)}, {}, {-1, 1}, {1}),
        make_sample("transposed", {transposed({3, 4, 2}, t)}, {}, {0, 1}, {0}),
        make_sample("offset", {offset({3, 4}, t)}, {}, {1, 0}, {1}),
        make_sample("same dim", {random_tensor({2, 3}, t)}, {}, {1, 1}, {0}),
        make_sample("zero-size", {random_tensor({0, 3}, t)}, {}, {0, 1}, {0}),
    };
  };
  info.op = [](const SampleInput& s) {
    const Tensor& x = s.tensors[0];
    return std::vector<Tensor>{s.scalars[0] != 0 ? x.swapdims(s.ints[0], s.ints[1]) : x.swapaxes(s.ints[0], s.ints[1])};
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const int64_t n = in[0].dim();
    Shape order(n);
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::swap(order[wrap(s.ints[0], n)], order[wrap(s.ints[1], n)]);
    return std::vector<RefTensor>{permuted(in[0], order)};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("dim out of range", {randn({2, 3})}, typeid(IndexError), {"swapaxes", "2"}, {}, {0, 2}, {0}),
        make_error("dim out of range, swapdims", {randn({2, 3})}, typeid(IndexError), {"swapdims", "2"}, {}, {0, 2},
                   {1}),
    };
  };
  return info;
}

// ints = {dim}. A zero-size dim gives no results, which the driver cannot compare
// (tests/core/test_shape_composites.cpp checks it).
OpInfo unbind_entry() {
  OpInfo info;
  info.name = "unbind";
  info.family = OpFamily::Indexing;
  info.schemas = {"unbind.int"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "one select view per index";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("dim 0", {random_tensor({3, 4}, t)}, {}, {0}),
        make_sample("last dim, transposed", {transposed({4, 2, 3}, t)}, {}, {-1}),
        make_sample("offset", {offset({2, 3}, t)}, {}, {1}),
        make_sample("1-D", {random_tensor({4}, t)}, {}, {0}),
        make_sample("zero-size elsewhere", {random_tensor({2, 0}, t)}, {}, {0}),
    };
  };
  info.op = [](const SampleInput& s) { return s.tensors[0].unbind(s.ints[0]); };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const RefTensor& a = in[0];
    const int64_t d = wrap(s.ints[0], a.dim());
    Shape shape = a.shape;
    shape.erase(shape.begin() + d);
    std::vector<RefTensor> out;
    for (int64_t k = 0; k < a.shape[d]; ++k) {
      RefTensor piece(shape, a.dtype);
      for_each_index(shape, [&](const std::vector<int64_t>& idx) {
        std::vector<int64_t> src = idx;
        src.insert(src.begin() + d, k);
        piece.at(idx) = a.at(src);
      });
      out.push_back(piece);
    }
    return out;
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("0-dim", {randn({})}, typeid(ValueError), {"unbind", "0-dim"}, {}, {0}),
        make_error("dim out of range", {randn({2, 3})}, typeid(IndexError), {"unbind", "2"}, {}, {2}),
    };
  };
  return info;
}

// tensors = {self, other}: other gives the shape only, so it is int32 (never differentiated).
OpInfo like_entry(std::string op_name) {
  OpInfo info;
  info.name = op_name;
  info.family = OpFamily::Indexing;
  info.schemas = {op_name};
  info.dtypes = kAll;
  info.differentiable = true;
  const bool expands = op_name == "expand_as";
  info.samples = [op_name, expands](DType t) {
    std::vector<SampleInput> v;
    auto like = [](Shape shape) { return zeros(shape, DType::Int32); };
    if (expands) {
      v.push_back(make_sample("broadcast rows", {random_tensor({1, 4}, t), like({3, 4})}));
      v.push_back(make_sample("new leading dims", {random_tensor({3, 1}, t), like({2, 3, 5})}));
      v.push_back(make_sample("transposed", {transposed({3, 1, 4}, t), like({3, 2, 4})}));
      v.push_back(make_sample("0-dim", {random_tensor({}, t), like({2, 2})}));
      v.push_back(make_sample("zero-size", {random_tensor({1, 3}, t), like({0, 3})}));
    } else {
      v.push_back(make_sample("contiguous", {random_tensor({2, 6}, t), like({3, 4})}));
      v.push_back(make_sample("offset", {offset({2, 6}, t), like({12})}));
      v.push_back(make_sample("0-dim", {random_tensor({}, t), like({1, 1})}));
      v.push_back(make_sample("zero-size", {random_tensor({0, 4}, t), like({2, 0})}));
      if (op_name == "reshape_as") v.push_back(make_sample("transposed (copies)", {transposed({3, 4}, t), like({12})}));
    }
    return v;
  };
  info.op = [op_name](const SampleInput& s) {
    const Tensor &x = s.tensors[0], &other = s.tensors[1];
    if (op_name == "view_as") return std::vector<Tensor>{x.view_as(other)};
    if (op_name == "reshape_as") return std::vector<Tensor>{x.reshape_as(other)};
    return std::vector<Tensor>{x.expand_as(other)};
  };
  info.reference = [expands](const std::vector<RefTensor>& in, const SampleInput&) {
    if (expands) return std::vector<RefTensor>{broadcast_ref(in[0], in[1].shape)};
    RefTensor out(in[1].shape, in[0].dtype);
    out.data = in[0].data;  // row-major order is kept
    return std::vector<RefTensor>{out};
  };
  info.error_inputs = [op_name, expands] {
    if (expands) {
      return std::vector<ErrorInput>{
          make_error("size mismatch", {randn({2, 3}), zeros({2, 4}, DType::Int32)}, typeid(ValueError),
                     {"expand_as", "[2, 3]", "[2, 4]"}),
      };
    }
    return std::vector<ErrorInput>{
        make_error("numel mismatch", {randn({2, 3}), zeros({4, 2}, DType::Int32)}, typeid(ValueError), {op_name, "6"}),
    };
  };
  return info;
}

// dims = size.
OpInfo broadcast_to_entry() {
  OpInfo info;
  info.name = "broadcast_to";
  info.family = OpFamily::Indexing;
  info.schemas = {"broadcast_to"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "a view (expand)";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("broadcast rows", {random_tensor({1, 4}, t)}, {3, 4}),
        make_sample("new leading dims, -1 keeps a size", {random_tensor({3, 1}, t)}, {2, -1, 5}),
        make_sample("offset", {offset({2, 1}, t)}, {2, 2, 3}),
        make_sample("0-dim", {random_tensor({}, t)}, {2, 3}),
        make_sample("zero-size", {random_tensor({1, 3}, t)}, {0, 3}),
    };
  };
  info.op = [](const SampleInput& s) { return std::vector<Tensor>{s.tensors[0].broadcast_to(s.dims)}; };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    Shape shape = s.dims;
    const size_t lead = shape.size() - in[0].shape.size();
    for (size_t d = lead; d < shape.size(); ++d) {
      if (shape[d] == -1) shape[d] = in[0].shape[d - lead];
    }
    return std::vector<RefTensor>{broadcast_ref(in[0], shape)};
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("size mismatch", {randn({2, 3})}, typeid(ValueError), {"broadcast_to", "3"}, {2, 4}),
        make_error("fewer dims", {randn({2, 3})}, typeid(ValueError), {"broadcast_to"}, {3}),
    };
  };
  return info;
}

OpInfo broadcast_tensors_entry() {
  OpInfo info;
  info.name = "broadcast_tensors";
  info.family = OpFamily::Indexing;
  info.schemas = {"broadcast_tensors"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "views (expand)";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("two", {random_tensor({3, 1}, t), random_tensor({1, 4}, t)}),
        make_sample("three, mixed dtypes",
                    {random_tensor({2, 1, 1}, t), random_tensor({3, 1}, DType::Float64), random_tensor({4}, t)}),
        make_sample("transposed and 0-dim", {transposed({4, 3}, t), random_tensor({}, t)}),
        make_sample("one", {offset({2, 3}, t)}),
        make_sample("zero-size", {random_tensor({0, 1}, t), random_tensor({3}, t)}),
    };
  };
  info.op = [](const SampleInput& s) { return broadcast_tensors(s.tensors); };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput&) {
    const Shape shape = broadcast_shape(in);
    std::vector<RefTensor> out;
    for (const RefTensor& a : in) out.push_back(broadcast_ref(a, shape));
    return out;
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("shapes do not broadcast", {randn({2, 3}), randn({4})}, typeid(ValueError), {"broadcast_tensors"}),
    };
  };
  return info;
}

// scalars[0]: 0 the default indexing, 1 "ij", 2 "xy", 3 an invalid string.
OpInfo meshgrid_entry() {
  OpInfo info;
  info.name = "meshgrid";
  info.family = OpFamily::Indexing;
  info.schemas = {"meshgrid", "meshgrid.indexing"};
  info.dtypes = kAll;
  info.differentiable = true;
  info.notes = "views (expand); the default indexing is \"ij\"";
  info.samples = [](DType t) {
    return std::vector<SampleInput>{
        make_sample("two, default", {random_tensor({3}, t), random_tensor({4}, t)}, {}, {}, {0}),
        make_sample("two, ij", {random_tensor({3}, t), random_tensor({4}, t)}, {}, {}, {1}),
        make_sample("three, xy", {random_tensor({2}, t), random_tensor({3}, t), random_tensor({4}, t)}, {}, {}, {2}),
        make_sample("strided and 0-dim, xy", {random_tensor({6}, t).slice(0, 1, 6, 2), random_tensor({}, t)}, {}, {},
                    {2}),
        make_sample("one, xy", {random_tensor({3}, t)}, {}, {}, {2}),
        make_sample("zero-size", {random_tensor({0}, t), random_tensor({2}, t)}, {}, {}, {1}),
    };
  };
  info.op = [](const SampleInput& s) {
    if (s.scalars[0] == 0) return meshgrid(s.tensors);
    const char* names[] = {"", "ij", "xy", "yx"};
    return meshgrid(s.tensors, names[static_cast<int>(s.scalars[0])]);
  };
  info.reference = [](const std::vector<RefTensor>& in, const SampleInput& s) {
    const bool xy = s.scalars[0] == 2 && in.size() >= 2;
    Shape shape;
    for (const RefTensor& a : in) shape.push_back(a.numel());
    if (xy) std::swap(shape[0], shape[1]);
    std::vector<RefTensor> out;
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t pos = xy && i < 2 ? 1 - i : i;
      RefTensor r(shape, in[i].dtype);
      for_each_index(shape, [&](const std::vector<int64_t>& idx) { r.at(idx) = in[i].data[idx[pos]]; });
      out.push_back(r);
    }
    return out;
  };
  info.error_inputs = [] {
    return std::vector<ErrorInput>{
        make_error("2-D input", {randn({3}), randn({2, 2})}, typeid(ValueError), {"meshgrid", "2 dims", "tensor 1"}, {},
                   {}, {1}),
        make_error("dtypes differ", {randn({3}), zeros({2}, DType::Int64)}, typeid(TypeError),
                   {"meshgrid", "fp32", "int64"}, {}, {}, {1}),
        make_error("unknown indexing", {randn({3}), randn({2})}, typeid(ValueError), {"meshgrid", "yx"}, {}, {}, {3}),
    };
  };
  return info;
}

}  // namespace

ANATOMY_REGISTER_OPS(views) {
  return {movedim_entry(),       swapaxes_entry(),          unbind_entry(),
          like_entry("view_as"), like_entry("reshape_as"),  like_entry("expand_as"),
          broadcast_to_entry(),  broadcast_tensors_entry(), meshgrid_entry()};
}

}  // namespace anatomy::testing
