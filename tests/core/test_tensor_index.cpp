// Python's indexing from C++ (x.index({Slice(1, None), 0, "...", None}), index_put_ with the
// same indices): every form against a reference written here with loops over row-major values,
// views that share storage, non-contiguous and offset inputs, advanced indices placed as
// PyTorch places them, the typed errors (self unchanged), and gradients.
#include <limits>
#include <random>

#include "test_util.h"

using namespace anatomy;
using namespace anatomy::indexing;
using namespace anatomy_test;

namespace {

Tensor ints(std::vector<int64_t> v, V shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return tensor(v, shape, TensorOptions().dtype(DType::Int64));
}

// Row-major position of `at` in a shape.
int64_t flat(const V& shape, const V& at) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + at[d];
  return f;
}

// One index of the reference: an integer, a slice, None, the ellipsis, or a 1-D int64 tensor
// of picks (all of one case's have one length).
struct RefIndex {
  enum Kind { Int, Range, NewDim, Dots, Picks } kind = Int;
  int64_t i = 0;
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  V picks;
  static RefIndex of(Kind k, int64_t i = 0) {
    RefIndex b;
    b.kind = k;
    b.i = i;
    return b;
  }
  TensorIndex index() const {
    switch (kind) {
      case Int:
        return i;
      case Range:
        return Slice(start, stop, step);
      case NewDim:
        return None;
      case Dots:
        return "...";
      case Picks:
        return ints(picks);
    }
    return None;
  }
};

// x[indices] by loops over x's row-major values: each result dim is a slice of a dim of x (first
// element, step), a new dim of size 1, or the block of picks; integers fix a coordinate. The
// block stands where the picked dims were when nothing but integers separates them, first
// otherwise (PyTorch's placement: integers are selects, so they separate nothing).
struct Expected {
  V shape;
  D values;
  V positions;  // of each value, row-major in x
};
Expected reference(const Tensor& x, const std::vector<RefIndex>& indices) {
  const V xs = vec(x.sizes());
  const D xv = values(x);
  int64_t taken = 0;
  for (const RefIndex& b : indices)
    taken += b.kind == RefIndex::Int || b.kind == RefIndex::Range || b.kind == RefIndex::Picks;
  struct OutDim {
    int64_t src_dim;  // -1: a new dim, -2: the block of picks
    int64_t first, step, size;
    const V* picks = nullptr;
  };
  std::vector<OutDim> out;
  V fixed(xs.size(), 0);
  int64_t d = 0;
  auto whole = [&](int64_t dim) { out.push_back({dim, 0, 1, xs[dim]}); };
  for (const RefIndex& b : indices) {
    if (b.kind == RefIndex::Int) {
      fixed[d] = b.i < 0 ? b.i + xs[d] : b.i;
      ++d;
    } else if (b.kind == RefIndex::Range) {
      const int64_t len = xs[d];
      auto norm = [len](std::optional<int64_t> v, int64_t dflt) {
        if (!v) return dflt;
        int64_t i = *v < 0 ? *v + len : *v;
        return i < 0 ? 0 : (i > len ? len : i);
      };
      const int64_t s = norm(b.start, 0), e = norm(b.stop, len);
      out.push_back({d, s, b.step, e > s ? (e - s + b.step - 1) / b.step : 0});
      ++d;
    } else if (b.kind == RefIndex::Picks) {
      out.push_back({d++, 0, 1, static_cast<int64_t>(b.picks.size()), &b.picks});
    } else if (b.kind == RefIndex::NewDim) {
      out.push_back({-1, 0, 1, 1});
    } else {
      for (int64_t k = 0; k < static_cast<int64_t>(xs.size()) - taken; ++k) whole(d++);
    }
  }
  while (d < static_cast<int64_t>(xs.size())) whole(d++);
  std::vector<OutDim> picked, rest;
  size_t first_pick = 0, last_pick = 0;
  for (size_t j = 0; j < out.size(); ++j) {
    if (!out[j].picks) {
      rest.push_back(out[j]);
      continue;
    }
    if (picked.empty()) first_pick = j;
    last_pick = j;
    picked.push_back(out[j]);
  }
  if (!picked.empty()) {
    const bool adjacent = last_pick - first_pick + 1 == picked.size();
    out = rest;
    out.insert(out.begin() + static_cast<int64_t>(adjacent ? first_pick : 0),
               OutDim{-2, 0, 1, picked[0].size, nullptr});
  }
  Expected r;
  int64_t n = 1;
  for (const OutDim& o : out) {
    r.shape.push_back(o.size);
    n *= o.size;
  }
  V at(out.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    V src = fixed;
    for (size_t j = 0; j < out.size(); ++j) {
      if (out[j].src_dim >= 0) src[out[j].src_dim] = out[j].first + at[j] * out[j].step;
      if (out[j].src_dim != -2) continue;
      for (const OutDim& p : picked) {
        const int64_t v = (*p.picks)[at[j]];
        src[p.src_dim] = v < 0 ? v + xs[p.src_dim] : v;
      }
    }
    r.positions.push_back(flat(xs, src));
    r.values.push_back(xv[r.positions.back()]);
    for (int64_t j = static_cast<int64_t>(out.size()) - 1; j >= 0; --j) {
      if (++at[j] < out[j].size) break;
      at[j] = 0;
    }
  }
  return r;
}

using Indices = std::vector<TensorIndex>;

Indices to_indices(const std::vector<RefIndex>& b) {
  Indices out;
  for (const RefIndex& i : b) out.push_back(i.index());
  return out;
}

// A random x of 0 to 4 dims (sizes 0 to 4): contiguous, transposed, or a sliced window of a base.
Tensor random_input(std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> ndim(0, 4), size(0, 4), layout(0, 2);
  V shape(ndim(rng));
  for (int64_t& s : shape) s = size(rng);
  switch (layout(rng)) {
    case 0:
      return randn(shape);
    case 1: {
      if (shape.size() < 2) return randn(shape);
      V t = shape;
      std::swap(t[0], t[1]);
      return randn(t).transpose(0, 1);
    }
    default: {
      V big = shape;
      for (int64_t& s : big) s += 2;
      Tensor b = randn(big);
      for (size_t d = 0; d < shape.size(); ++d) b = b.narrow(static_cast<int64_t>(d), 1, shape[d]);
      return b;
    }
  }
}

// Random indices that are valid for x: integers in range (maybe negative), slices with bounds
// past either end and steps 1 to 3, None, at most one ellipsis, which leaves a random number of
// trailing dims to the indices after it; with `picks`, also index tensors of 0 to 3 picks each.
std::vector<RefIndex> random_indices(const Tensor& x, std::mt19937& rng, bool picks = false) {
  std::vector<RefIndex> out;
  std::uniform_int_distribution<int> kind(0, 5), coin(0, 1);
  std::uniform_int_distribution<int64_t> bound(-6, 6), step(1, 3), count(0, 3);
  const int64_t k = picks ? count(rng) : 0;
  auto consuming = [&](int64_t d) {
    if (picks && x.size(d) > 0 && coin(rng)) {
      RefIndex b = RefIndex::of(RefIndex::Picks);
      std::uniform_int_distribution<int64_t> i(-x.size(d), x.size(d) - 1);
      for (int64_t n = 0; n < k; ++n) b.picks.push_back(i(rng));
      return b;
    }
    if (coin(rng) && x.size(d) > 0) {
      std::uniform_int_distribution<int64_t> i(-x.size(d), x.size(d) - 1);
      return RefIndex::of(RefIndex::Int, i(rng));
    }
    RefIndex b = RefIndex::of(RefIndex::Range);
    if (coin(rng)) b.start = bound(rng);
    if (coin(rng)) b.stop = bound(rng);
    b.step = step(rng);
    return b;
  };
  int64_t d = 0;
  // With picks, indices up to the last dim, so that picks are often separated by slices or None.
  while (picks ? d < x.dim() : coin(rng) + coin(rng) > 0) {
    const int k = kind(rng);
    if (k <= 2 && d < x.dim()) {
      out.push_back(consuming(d++));
    } else if (k == 3) {
      out.push_back(RefIndex::of(RefIndex::NewDim));
    } else if (k == 4) {
      out.push_back(RefIndex::of(RefIndex::Dots));
      std::uniform_int_distribution<int64_t> trailing(0, x.dim() - d);
      for (d = x.dim() - trailing(rng); d < x.dim();) {
        if (coin(rng) && coin(rng)) out.push_back(RefIndex::of(RefIndex::NewDim));
        out.push_back(consuming(d++));
      }
      break;
    }
  }
  return out;
}

// Runs check(x, indices, reference, trial) on n random inputs with random indices.
template <typename Check>
void random_cases(unsigned seed, int n, bool picks, Check check) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < n; ++trial) {
    Tensor x = random_input(rng);
    const std::vector<RefIndex> b = random_indices(x, rng, picks);
    const Indices idx = to_indices(b);
    INFO("x shape ", doctest::toString(vec(x.sizes())), " indices ", to_string(idx));
    check(x, idx, reference(x, b), trial);
  }
}

}  // namespace

TEST_CASE("tensor index: random basic indices give the reference's values as a view of x") {
  random_cases(7, 400, false, [](const Tensor& x, const Indices& idx, const Expected& want, int) {
    Tensor got = x.index(idx);
    CHECK(vec(got.sizes()) == want.shape);
    CHECK(values(got) == want.values);
    CHECK(got.is_alias_of(x));
  });
}

TEST_CASE("tensor index: index_put_ with random basic indices writes the reference's places only") {
  random_cases(11, 300, false, [](const Tensor& x, const Indices& idx, const Expected& place, int trial) {
    D want = values(x);
    // A value of the indexed shape, or one row of it that broadcasts.
    V value_shape = place.shape;
    if (!value_shape.empty() && trial % 2) value_shape.front() = 1;
    Tensor value = randn(value_shape);
    const D v = values(value.expand(place.shape));
    for (size_t k = 0; k < place.positions.size(); ++k) want[place.positions[k]] = v[k];
    x.index_put_(idx, value);
    CHECK(values(x) == want);
  });
}

TEST_CASE("tensor index: random index tensors among basic indices give the reference's values") {
  random_cases(13, 1000, true, [](const Tensor& x, const Indices& idx, const Expected& want, int) {
    Tensor got = x.index(idx);
    CHECK(vec(got.sizes()) == want.shape);
    CHECK(values(got) == want.values);
  });
}

TEST_CASE("tensor index: the ellipsis, None and trailing indices after the ellipsis") {
  Tensor x = arange(24, DType::Float32).view({2, 3, 4});
  Tensor a = x.index({"...", 1});
  CHECK(vec(a.sizes()) == V{2, 3});
  CHECK(values(a) == values(x.select(2, 1)));
  Tensor b = x.index({0, Ellipsis, Slice(None, None, 2), None});
  CHECK(vec(b.sizes()) == V{3, 2, 1});
  CHECK(values(b) == values(x.select(0, 0).slice(1, 0, 4, 2)));
  // An ellipsis that stands for no dim, and None in front.
  Tensor c = x.index({None, 1, "...", 2, Slice(-3, -1)});
  CHECK(vec(c.sizes()) == V{1, 2});
  CHECK(values(c) == D{21, 22});
  // Empty slices, start past stop.
  CHECK(vec(x.index({Slice(2, 1)}).sizes()) == V{0, 3, 4});
  CHECK(vec(x.index({Slice(), Slice(5, None)}).sizes()) == V{2, 0, 4});
  // No index at all and the lone ellipsis are new views of all of x.
  Tensor all = x.index({"..."});
  CHECK(!all.is_same(x));
  CHECK(all.is_alias_of(x));
  CHECK(vec(all.strides()) == vec(x.strides()));
  CHECK(vec(x.index({}).sizes()) == V{2, 3, 4});
  // Any integer type.
  CHECK(values(x.index({static_cast<size_t>(1), static_cast<int32_t>(2), static_cast<int8_t>(-1)})) == D{23});
  CHECK(to_string({Slice(1, None), 0, "...", None, true, Slice(None, -1, 2), Tensor()}) ==
        "[1:, 0, ..., None, True, :-1:2, :]");
}

TEST_CASE("tensor index: a basic index is a view that writes reach") {
  Tensor x = zeros({3, 4});
  Tensor col = x.index({Slice(), 0});
  CHECK(col.is_alias_of(x));
  col.fill_(5);
  CHECK(values(x.select(1, 0)) == D{5, 5, 5});
  // Through an offset, transposed base.
  Tensor base = arange(30, DType::Float32).view({5, 6});
  Tensor w = base.narrow(0, 1, 3).t();  // [6, 3], offset 6
  Tensor v = w.index({Slice(1, None, 2), -1});
  CHECK(values(v) == D{19, 21, 23});
  v.fill_(-1);
  CHECK(values(base.select(0, 3)) == D{18, -1, 20, -1, 22, -1});
}

TEST_CASE("tensor index: integer tensors and slices together, placed as PyTorch places them") {
  Tensor x = randn({4, 5, 3});
  const D xv = values(x);
  auto at = [&](int64_t i, int64_t j, int64_t k) { return xv[(i * 5 + j) * 3 + k]; };
  // A slice then an index tensor: [3, <2>, 3].
  Tensor idx = ints({4, -5});
  Tensor a = x.index({Slice(1, None), idx});
  CHECK(vec(a.sizes()) == V{3, 2, 3});
  D want;
  for (int64_t i = 1; i < 4; ++i)
    for (int64_t j : {4, 0})
      for (int64_t k = 0; k < 3; ++k) want.push_back(at(i, j, k));
  CHECK(values(a) == want);
  CHECK(!a.is_alias_of(x));
  // Two index tensors broadcast together: [2, 1] and [3] give [2, 3].
  Tensor r = ints({0, 3}, {2, 1}), c = ints({1, 2, 4});
  Tensor b = x.index({r, c, 2});
  CHECK(vec(b.sizes()) == V{2, 3});
  want.clear();
  for (int64_t i : {0, 3})
    for (int64_t j : {1, 2, 4}) want.push_back(at(i, j, 2));
  CHECK(values(b) == want);
  // Index tensors separated by a slice: the indexed block goes first, [<2>, 5].
  Tensor s = x.index({ints({1, 2}), Slice(), ints({0, 2})});
  CHECK(vec(s.sizes()) == V{2, 5});
  want.clear();
  for (auto [i, k] : {std::pair<int64_t, int64_t>{1, 0}, {2, 2}})
    for (int64_t j = 0; j < 5; ++j) want.push_back(at(i, j, k));
  CHECK(values(s) == want);
  // An integer is a select (PyTorch), not an advanced index (NumPy): x[0, :, idx] is [5, 2].
  Tensor p = x.index({0, Slice(), ints({2, 1})});
  CHECK(vec(p.sizes()) == V{5, 2});
  CHECK(values(p) == values(x.select(0, 0).index_select(1, ints({2, 1}))));
  // A 0-dim index tensor removes its dim; int32 indices work alike.
  CHECK(values(x.index({ints({2}, {}).view({}), Slice(), 1})) == values(x.select(0, 2).select(1, 1)));
  CHECK(values(x.index({"...", ints({2, 0}).to(DType::Int32)})) == values(x.index_select(2, ints({2, 0}))));
  // An undefined tensor is a full slice, as in the std::vector<Tensor> form.
  CHECK(values(x.index({Tensor(), idx})) == values(x.index(std::vector<Tensor>{Tensor(), idx})));
}

TEST_CASE("tensor index: bool masks, uint8 masks, 0-dim masks and bools") {
  Tensor x = arange(12, DType::Float32).view({3, 4});
  Tensor mask = tensor({true, false, true});
  CHECK(values(x.index({mask})) == D{0, 1, 2, 3, 8, 9, 10, 11});
  Tensor m2 = x.gt(6);
  CHECK(values(x.index({m2})) == D{7, 8, 9, 10, 11});
  CHECK(values(x.index({m2.to(DType::UInt8)})) == D{7, 8, 9, 10, 11});
  // A mask after a slice and None: covers the dims it has.
  Tensor m3 = tensor({false, true, true, false});
  Tensor y = x.index({None, Slice(1, None), m3});
  CHECK(vec(y.sizes()) == V{1, 2, 2});
  CHECK(values(y) == D{5, 6, 9, 10});
  // Bools: a new dim of size 1 (true) or 0 (false), like a 0-dim mask.
  CHECK(vec(x.index({true}).sizes()) == V{1, 3, 4});
  CHECK(values(x.index({true})) == values(x));
  CHECK(vec(x.index({Slice(), false}).sizes()) == V{3, 0, 4});
  CHECK(vec(x.index({tensor({true}).view({})}).sizes()) == V{1, 3, 4});
  CHECK(vec(x.index({1, tensor({false}).view({})}).sizes()) == V{0, 4});
}

TEST_CASE("tensor index: zero-size tensors") {
  Tensor x = zeros({0, 3});
  CHECK(vec(x.index({Slice(), 1}).sizes()) == V{0});
  CHECK(vec(x.index({ints({})}).sizes()) == V{0, 3});
  CHECK(vec(x.index({Slice(), ints({2, 2})}).sizes()) == V{0, 2});
  CHECK(vec(x.index({x.gt(0)}).sizes()) == V{0});
  Tensor s = scalar_tensor(4.0);
  CHECK(values(s.index({None, "..."})) == D{4});
  CHECK(vec(s.index({}).sizes()) == V{});
  x.index_put_({Slice(), 0}, Scalar(1));  // writes nothing and raises nothing
  CHECK(x.numel() == 0);
}

TEST_CASE("tensor index: index_put_ with basic indices copies the broadcast value into the view") {
  Tensor x = zeros({3, 4});
  x.index_put_({Slice(1, None), Slice(None, None, 2)}, tensor({1.0f, 2.0f}));
  CHECK(values(x) == D{0, 0, 0, 0, 1, 0, 2, 0, 1, 0, 2, 0});
  x.index_put_({0}, Scalar(7));
  CHECK(values(x.select(0, 0)) == D{7, 7, 7, 7});
  // Leading size-1 dims of the value do not count; the value converts to x's dtype.
  x.index_put_({-1}, arange(4, DType::Int64).view({1, 1, 4}));
  CHECK(values(x.select(0, 2)) == D{0, 1, 2, 3});
  // Into a transposed x, through None and the ellipsis.
  Tensor t = zeros({4, 3}).t();
  t.index_put_({None, "...", 1}, tensor({1.0f, 2.0f, 3.0f}).view({1, 1, 3}));
  CHECK(values(t.select(1, 1)) == D{1, 2, 3});
  CHECK(values(t.sum()) == D{6});
}

TEST_CASE("tensor index: index_put_ with tensor indices writes (without accumulating) into the view") {
  Tensor x = zeros({3, 4});
  x.index_put_({Slice(), ints({1, 3})}, tensor({5.0f, 6.0f}));
  CHECK(values(x) == D{0, 5, 0, 6, 0, 5, 0, 6, 0, 5, 0, 6});
  // A repeated index is written, not added up.
  Tensor y = zeros({4});
  y.index_put_({ints({2, 2})}, Scalar(1));
  CHECK(values(y) == D{0, 0, 1, 0});
  // A mask after an integer, with a broadcast scalar.
  Tensor z = arange(12, DType::Float32).view({3, 4});
  z.index_put_({1, z.select(0, 1).gt(5)}, Scalar(-1));
  CHECK(values(z.select(0, 1)) == D{4, 5, -1, -1});
  // Separated index tensors: the value is laid out with the indexed block first ([2, 3]).
  Tensor w = zeros({2, 3, 2});
  w.index_put_({ints({0, 1}), Slice(), ints({1, 0})}, tensor({1.0f, 2.0f, 3.0f}));
  CHECK(values(w) == D{0, 1, 0, 2, 0, 3, 1, 0, 2, 0, 3, 0});
  // A false bool writes nothing.
  Tensor before = w.clone();
  w.index_put_({false}, Scalar(9));
  CHECK(values(w) == values(before));
}

TEST_CASE("tensor index: bad indices raise typed errors naming index and leave self unchanged") {
  Tensor x = arange(12, DType::Float32).view({3, 4});
  EXPECT_ERROR(IndexError, x.index({Slice(), 4}), "index", "index 4", "dim 1", "size 4");
  EXPECT_ERROR(IndexError, x.index({-4}), "index", "-4", "dim 0", "size 3");
  EXPECT_ERROR(IndexError, x.index({"...", Slice(), 9}), "index", "9", "dim 1");
  EXPECT_ERROR(IndexError, x.index({0, 0, 0}), "index", "too many indices", "dimension 2");
  EXPECT_ERROR(IndexError, x.index({Ellipsis, 0, "..."}), "index", "single ellipsis");
  EXPECT_ERROR(IndexError, x.index({tensor({true, false}), 0}), "index", "mask");
  EXPECT_ERROR(IndexError, x.index({ints({0, 3})}), "index", "3");
  EXPECT_ERROR(IndexError, x.index({ints({0, 1}), ints({0, 1, 2})}), "index", "broadcast");
  EXPECT_ERROR(IndexError, x.index({std::numeric_limits<uint64_t>::max()}), "index", "int64");
  EXPECT_ERROR(ValueError, x.index({Slice(None, None, 0)}), "index", "step", "0");
  EXPECT_ERROR(ValueError, x.index({Slice(), Slice(0, 2, -1)}), "index", "step", "-1");
  EXPECT_ERROR(ValueError, x.index({".."}), "index", "..");
  EXPECT_ERROR(TypeError, x.index({tensor({0.0f})}), "index", "fp32");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.index_put_({3}, Scalar(1)), "index_put_", "3", "size 3");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.index_put_({Slice(), ints({0, 4})}, Scalar(1)), "index_put_", "4");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.index_put_({0}, ones({3})), "index_put_", "[3]", "[4]");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.index_put_({ints({0, 1})}, ones({3, 4})), "index_put_");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.index_put_({0}, Tensor()), "index_put_", "undefined");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.index_put_({0, Slice(0, 1, 0)}, Scalar(1)), "index_put_", "step");
  EXPECT_ERROR_UNCHANGED(x, TypeError, x.index_put_({tensor({1.5}).to(DType::Float64)}, Scalar(1)), "index_put_",
                         "fp64");
  Tensor u = zeros({2}, DType::UInt8);
  EXPECT_ERROR_UNCHANGED(u, ValueError, u.index_put_({0}, Scalar(300)), "index_put_", "300");
}

TEST_CASE("tensor index: gradients flow through basic and advanced indices") {
  Tensor x = randn({4, 3}).requires_grad_();
  x.index({Slice(1, None), 0}).sum().backward();
  CHECK(values(x.grad()) == D{0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0});
  // Repeated tensor indices add up in the gradient.
  Tensor y = randn({3}).requires_grad_();
  y.index({ints({2, 0, 2})}).sum().backward();
  CHECK(values(y.grad()) == D{1, 0, 2});
}

TEST_CASE("tensor index: index_put_ refuses a leaf that requires grad and records on a non-leaf") {
  Tensor leaf = randn({3, 2}).requires_grad_();
  EXPECT_ERROR_UNCHANGED(leaf, ValueError, leaf.index_put_({Slice(), 0}, Scalar(1)), "leaf");
  EXPECT_ERROR_UNCHANGED(leaf, ValueError, leaf.index_put_({ints({0})}, Scalar(1)), "leaf");
  // On a non-leaf: the overwritten places get no gradient, the value gets theirs.
  Tensor v = randn({3}).requires_grad_();
  Tensor y = leaf.mul(2);
  y.index_put_({Slice(), 1}, v);
  CHECK(y.grad_fn() != nullptr);
  y.mul(y).sum().backward();
  const D yv = values(y.detach());
  CHECK(values(v.grad()) == D{2 * yv[1], 2 * yv[3], 2 * yv[5]});
  const D lv = values(leaf.detach());
  CHECK(values(leaf.grad()) == D{8 * lv[0], 0, 8 * lv[2], 0, 8 * lv[4], 0});
  // With tensor indices too.
  Tensor w = randn({3}).requires_grad_();
  Tensor z = w.mul(1);
  z.index_put_({ints({1})}, Scalar(0));
  z.sum().backward();
  CHECK(values(w.grad()) == D{1, 0, 1});
}

TEST_CASE("tensor index: the example of docs/tensor.md") {
  Tensor x = arange(24, DType::Float32).view({2, 3, 4});
  Tensor idx = ints({2, 0});
  Tensor a = x.index({Slice(1, None), 0, "...", None});
  CHECK(vec(a.sizes()) == V{1, 4, 1});
  CHECK(values(a) == D{12, 13, 14, 15});
  CHECK(a.is_alias_of(x));
  Tensor b = x.index({Slice(), idx});
  CHECK(vec(b.sizes()) == V{2, 2, 4});
  CHECK(values(b) == values(x.index_select(1, idx)));
  x.index_put_({"...", Slice(None, None, 2)}, 0.5);
  CHECK(values(x.select(0, 0).select(0, 0)) == D{0.5, 1, 0.5, 3});
  x.index_put_({x.gt(20)}, zeros({}));
  CHECK(values(x.select(0, 1).select(0, 2)) == D{0.5, 0, 0.5, 0});
}
