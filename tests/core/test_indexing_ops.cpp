// Indexing ops: exact values and special cases the op table does not express (aliasing between
// the written tensor and its source, accumulation order, NumPy's placement of the indexed block,
// Meta results, the Tensor methods).
#include <functional>

#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

namespace {
Tensor ints(std::vector<int64_t> v) {
  return tensor(v, {static_cast<int64_t>(v.size())}, TensorOptions().dtype(DType::Int64));
}
Tensor meta(std::initializer_list<int64_t> shape, DType t = DType::Float32) {
  return empty(shape, TensorOptions().device(kMeta).dtype(t));
}
}  // namespace

TEST_CASE("indexing: cat promotes, skips legacy empty tensors and converts each part") {
  Tensor r = cat({tensor({1, 2}), tensor({0.5}), empty({0}, DType::Int8)});
  CHECK(r.dtype() == DType::Float32);
  CHECK(values(r) == D{1, 2, 0.5});
  // A [0] tensor is skipped even next to 2-D tensors.
  Tensor m = cat({empty({0}), ones({2, 2}), zeros({2, 1})}, 1);
  CHECK(vec(m.sizes()) == V{2, 3});
  CHECK(values(m) == D{1, 1, 0, 1, 1, 0});
  CHECK(values(stack({tensor({1, 2}), tensor({3, 4})}, 1)) == D{1, 3, 2, 4});
}

TEST_CASE("indexing: cat of pieces lying end to end in one tensor is one copy, with the same values") {
  const Tensor x = arange(24, DType::Float32).view({4, 6});
  // The result and how many times the CPU's copy kernel ran.
  auto copies = [](const std::function<Tensor()>& f) {
    dispatch::TraceCapture capture;
    const Tensor r = f();
    int n = 0;
    for (const std::string& line : capture.lines()) n += line.find("(copy_cpu)") != std::string::npos;
    return std::make_pair(r, n);
  };
  // A chunk along dim 1 (strided pieces), back together: one copy.
  auto [joined, n] = copies([&] { return cat(x.chunk(3, 1), 1); });
  CHECK(equal(joined, x));
  CHECK(n == 1);
  // An unbind, stacked again: one copy.
  auto [stacked, m] = copies([&] { return stack(x.unbind(0)); });
  CHECK(equal(stacked, x));
  CHECK(m == 1);
  // Out of order, overlapping or of two dtypes: a copy per piece, and the right values.
  const std::vector<Tensor> rows = x.unbind(0);
  CHECK(values(cat({rows[1], rows[0]})) == values(cat({rows[1].clone(), rows[0].clone()})));
  CHECK(values(cat({rows[0], rows[0]})).size() == 12);
  CHECK(values(cat({rows[0], rows[0]}))[6] == 0.0);
  const Tensor mixed = cat({rows[0], rows[1].to(DType::Float64)});
  CHECK(mixed.dtype() == DType::Float64);
  CHECK(values(mixed) == values(x.narrow(0, 0, 2).reshape({12})));
  // A transposed tensor's rows are not adjacent; its columns are.
  const Tensor t = x.t();
  CHECK(equal(cat(t.chunk(2, 0), 0), t));
  CHECK(equal(cat(t.chunk(2, 1), 1), t));
}

TEST_CASE("indexing: advanced indexing places the indexed block as NumPy does") {
  Tensor x = arange(24).view({2, 3, 4});
  // Adjacent indexed dims stay in place: [2, <2>, ...] -> [2, 2].
  Tensor a = x.index({Tensor(), ints({0, 2}), ints({1, 3})});
  CHECK(vec(a.sizes()) == V{2, 2});
  CHECK(values(a) == D{1, 11, 13, 23});
  // Separated ones go first: [<2>, 3].
  Tensor b = x.index({ints({0, 1}), Tensor(), ints({3, 0})});
  CHECK(vec(b.sizes()) == V{2, 3});
  CHECK(values(b) == D{3, 7, 11, 12, 16, 20});
  // A bool mask picks its true positions; negative integers count from the end.
  CHECK(values(x.index({tensor({false, true}), ints({-1})})) == D{20, 21, 22, 23});
}

TEST_CASE("indexing: index_put_ accumulates repeated indices and reads an aliased source first") {
  Tensor x = zeros({5});
  x.index_put_({ints({0, 0, 2, 0})}, tensor({1.0f, 2.0f, 3.0f, 4.0f}), true);
  CHECK(values(x) == D{7, 0, 3, 0, 0});
  // Without accumulate the last write of a repeated index wins (serial CPU loop).
  x.index_put_({ints({1, 1})}, tensor({5.0f, 6.0f}));
  CHECK(values(x) == D{7, 6, 3, 0, 0});
  // The values are a view of self: they are read before anything is written.
  Tensor y = arange(4, DType::Float32);
  y.index_put_({ints({1, 2, 3})}, y.narrow(0, 0, 3));
  CHECK(values(y) == D{0, 0, 1, 2});
  // A scalar value, through the Tensor method.
  Tensor z = zeros({2, 3}, DType::Int32);
  z.index_put_({Tensor(), ints({2})}, Scalar(7));
  CHECK(values(z) == D{0, 0, 7, 0, 0, 7});
  // The functional form leaves self alone.
  Tensor w = index_put(z, {ints({0})}, zeros({3}, DType::Int32));
  CHECK(values(z) == D{0, 0, 7, 0, 0, 7});
  CHECK(values(w) == D{0, 0, 0, 0, 0, 7});
}

TEST_CASE("indexing: scatter with an aliased source and scatter_add in index order") {
  Tensor x = arange(4, DType::Float32).view({1, 4});
  // Shift right by one, the source being x itself.
  x.scatter_(1, ints({1, 2, 3}).view({1, 3}), x.narrow(1, 0, 3));
  CHECK(values(x) == D{0, 0, 1, 2});
  Tensor acc = zeros({3}, DType::Int64);
  acc.scatter_add_(0, ints({2, 2, 0, 2}), tensor({1, 10, 100, 1000}));
  CHECK(values(acc) == D{100, 0, 1011});
  CHECK(values(zeros({2}).scatter(0, ints({1}), Scalar(2.5))) == D{0, 2.5});
}

TEST_CASE("indexing: a failed write changes nothing even when earlier indices were valid") {
  Tensor x = zeros({4});
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.index_put_({ints({0, 1, 9})}, Scalar(1)), "index_put_", "9", "4");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.scatter_(0, ints({0, 4}), ones({2})), "scatter_", "4");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.masked_fill_(ones({4}, DType::Bool), Scalar(1e40)), "masked_fill_");
}

TEST_CASE("indexing: masked_fill casts the value like PyTorch and broadcasts the functional form") {
  Tensor i = zeros({3}, DType::Int32);
  i.masked_fill_(tensor({true, false, true}), 2.7);
  CHECK(values(i) == D{2, 0, 2});
  Tensor r = masked_fill(tensor({1.0f, 2.0f}), tensor({true, false, false, true}).view({2, 2}), -1.0);
  CHECK(vec(r.sizes()) == V{2, 2});
  CHECK(values(r) == D{-1, 2, 1, -1});
}

TEST_CASE("indexing: nonzero and masked_select in row-major order") {
  Tensor x = tensor({0.0, 3.0, -1.0, 0.0}).view({2, 2}).t();  // [[0, -1], [3, 0]]
  CHECK(values(nonzero(x)) == D{0, 1, 1, 0});
  CHECK(values(x.masked_select(tensor({false, true, true, false}).view({2, 2}))) == D{-1, 3});
}

TEST_CASE("indexing: Meta kernels give shapes without data") {
  CHECK(vec(index_select(meta({4, 5}), 1, meta({3}, DType::Int64)).sizes()) == V{4, 3});
  CHECK(vec(gather(meta({4, 5}), 0, meta({2, 5}, DType::Int64)).sizes()) == V{2, 5});
  CHECK(vec(embedding(meta({10, 8}), meta({2, 3}, DType::Int64)).sizes()) == V{2, 3, 8});
  CHECK(vec(cat({meta({2, 3}), meta({1, 3}, DType::Float64)}).sizes()) == V{3, 3});
  CHECK(cat({meta({2, 3}), meta({1, 3}, DType::Float64)}).dtype() == DType::Float64);
  CHECK(vec(stack({meta({2}), meta({2})}).sizes()) == V{2, 2});
  CHECK(vec(scatter_add(meta({3, 3}), 1, meta({3, 2}, DType::Int64), meta({3, 2})).sizes()) == V{3, 3});
  CHECK(vec(masked_fill(meta({3}), meta({2, 3}, DType::Bool), 1).sizes()) == V{2, 3});
  EXPECT_ERROR(ValueError, gather(meta({4, 5}), 0, meta({2, 6}, DType::Int64)), "gather", "[2, 6]");
  // Advanced indexing with integer tensors: the shape follows from the index shapes.
  CHECK(vec(meta({4, 5, 6}).index({meta({2}, DType::Int64), Tensor(), meta({3, 1}, DType::Int64)}).sizes()) ==
        V{3, 2, 5});
  CHECK(vec(index_put(meta({4, 5}), {Tensor(), meta({2}, DType::Int64)}, meta({2})).sizes()) == V{4, 5});
  EXPECT_ERROR(ValueError, meta({4, 5}).index_put_({meta({2}, DType::Int64)}, meta({3})), "index_put_", "[3]",
               "[2, 5]");
  EXPECT_ERROR(NotImplementedError, meta({4}).index({meta({4}, DType::Bool)}), "index", "bool");
  // Data-dependent shapes have no Meta kernel.
  EXPECT_ERROR(NotImplementedError, nonzero(meta({3})), "nonzero");
  EXPECT_ERROR(NotImplementedError, masked_select(meta({3}), meta({3}, DType::Bool)), "masked_select");
}

TEST_CASE("indexing: large reads split across threads give every element") {
  // 1000 x 200 rows reversed: more than two parallel grains, so the loop is split.
  Tensor x = arange(200000).view({1000, 200});
  Tensor rev = arange(999, -1, -1);
  auto check_reversed = [](const Tensor& r) {
    REQUIRE(vec(r.sizes()) == V{1000, 200});
    const D v = values(r);
    int64_t wrong = 0;
    for (int64_t i = 0; i < 1000; ++i)
      for (int64_t j = 0; j < 200; ++j) wrong += v[i * 200 + j] != static_cast<double>((999 - i) * 200 + j);
    CHECK(wrong == 0);
  };
  check_reversed(x.index_select(0, rev));
  check_reversed(x.index({rev}));
  check_reversed(x.t().index_select(1, rev).t());  // a transposed self and result
  Tensor g = x.gather(0, rev.view({1000, 1}).expand({1000, 200}).contiguous());
  check_reversed(g);
}
