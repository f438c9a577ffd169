// The composed views and shape operators beyond what the op table checks: which results share
// storage with the input (movedim, swapaxes, unbind, view_as, expand_as, broadcast_to,
// broadcast_tensors, meshgrid) and which never do (repeat_interleave, tile, diag), writes
// through the views, the in-place triangles, gradients through the views, and Meta shapes.
#include "anatomy/anatomy.h"
#include "test_util.h"

using namespace anatomy;
using anatomy_test::D;
using anatomy_test::V;
using anatomy_test::values;
using anatomy_test::vec;

namespace {

Tensor iota(std::vector<int64_t> shape, DType t = DType::Float32) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return arange(0, n, 1, t).reshape(shape);
}

}  // namespace

TEST_CASE("movedim and moveaxis are views: they share storage and writes show through") {
  Tensor x = iota({2, 3, 4});
  Tensor m = x.movedim(0, -1);
  CHECK(vec(m.sizes()) == V{3, 4, 2});
  CHECK(m.is_alias_of(x));
  CHECK(m.storage_offset() == x.storage_offset());
  CHECK(vec(m.strides()) == V{4, 1, 12});
  m.select(0, 1).select(0, 2).fill_(-1);  // m[1, 2, :] is x[:, 1, 2]
  CHECK(values(x.select(1, 1).select(1, 2)) == D{-1, -1});
  Tensor a = x.moveaxis({0, 1}, {2, 0});
  CHECK(vec(a.sizes()) == V{3, 4, 2});
  CHECK(a.is_alias_of(x));
  CHECK(values(a) == values(m));
}

TEST_CASE("movedim: bad dims are errors that leave the input alone") {
  Tensor x = iota({2, 3});
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.movedim({0, 0}, {0, 1}), "movedim", "repeated dim in source");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.movedim({0, 1}, {1, -1}), "movedim", "repeated dim in destination");
  EXPECT_ERROR_UNCHANGED(x, IndexError, x.movedim(2, 0), "movedim", "2");
}

TEST_CASE("swapaxes and swapdims are transpose: views of the input") {
  Tensor x = iota({2, 3});
  Tensor s = x.swapaxes(0, 1), d = x.swapdims(-1, 0);
  CHECK(s.is_alias_of(x));
  CHECK(d.is_alias_of(x));
  CHECK(vec(s.strides()) == V{1, 3});
  CHECK(values(s) == values(x.t()));
}

TEST_CASE("unbind returns views: writing through one changes the input and bumps the shared version") {
  Tensor x = iota({3, 2});
  std::vector<Tensor> rows = x.unbind(0);
  REQUIRE(rows.size() == 3);
  for (const Tensor& r : rows) CHECK(r.is_alias_of(x));
  const uint32_t before = x.version();
  rows[1].fill_(7);
  CHECK(values(x) == D{0, 1, 7, 7, 4, 5});
  CHECK(x.version() > before);
  std::vector<Tensor> cols = x.unbind(-1);
  REQUIRE(cols.size() == 2);
  CHECK(values(cols[1]) == D{1, 7, 5});
  cols[0].mul_(2);
  CHECK(values(x) == D{0, 1, 14, 7, 8, 5});
  CHECK(iota({0, 3}).unbind(0).empty());
  CHECK(iota({2, 0}).unbind(0).size() == 2);
}

TEST_CASE("unbind: gradients flow to every piece, and an in-place write through a piece is recorded") {
  Tensor leaf = randn({3, 2}, DType::Float64).requires_grad_();
  Tensor x = leaf * 1;
  std::vector<Tensor> rows = x.unbind(0);
  rows[1].mul_(3);
  (x * x).sum().backward();
  // x = leaf with row 1 tripled: d/dleaf sum(x^2) = 2 x * dx/dleaf.
  std::vector<double> want = values(leaf.detach());
  for (size_t i = 0; i < want.size(); ++i) want[i] *= (i / 2 == 1) ? 18 : 2;
  const D got = values(leaf.grad());
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]));
}

TEST_CASE("view_as, reshape_as, expand_as, broadcast_to share storage; reshape_as copies when it must") {
  Tensor x = iota({2, 6});
  Tensor other = zeros({3, 4}, DType::Int64);
  Tensor v = x.view_as(other);
  CHECK(v.is_alias_of(x));
  CHECK(vec(v.sizes()) == V{3, 4});
  CHECK(x.reshape_as(other).is_alias_of(x));
  CHECK_FALSE(x.t().reshape_as(zeros({12})).is_alias_of(x));
  EXPECT_ERROR(ValueError, x.t().view_as(zeros({12})), "view_as");

  Tensor row = iota({1, 4});
  Tensor e = row.expand_as(other), b = row.broadcast_to({3, 4});
  CHECK(e.is_alias_of(row));
  CHECK(b.is_alias_of(row));
  CHECK(vec(b.strides()) == V{0, 1});
  row.fill_(5);
  CHECK(values(b) == D(12, 5));
}

TEST_CASE("composites name the operator called in their errors, not the one they call") {
  Tensor v = randn({4});
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.tril_(), "tril_", "2 dims");
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.triu_(1), "triu_", "2 dims");
  const auto starts_with = [](const std::string& msg, const std::string& op) { return msg.rfind(op + ": ", 0) == 0; };
  const auto message = [](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Tensor x = randn({2, 3});
  CHECK(starts_with(message([&] { (void)x.swapaxes(0, 2); }), "swapaxes"));
  CHECK(starts_with(message([&] { (void)x.swapdims(0, 2); }), "swapdims"));
  CHECK(starts_with(message([&] { (void)x.view_as(randn({4, 2})); }), "view_as"));
  CHECK(starts_with(message([&] { (void)x.reshape_as(randn({4, 2})); }), "reshape_as"));
  CHECK(starts_with(message([&] { (void)x.broadcast_to({2, 4}); }), "broadcast_to"));
  CHECK(starts_with(message([&] { (void)x.expand_as(randn({2, 4})); }), "expand_as"));
}

TEST_CASE("broadcast_tensors and meshgrid return expanded views of their inputs") {
  Tensor a = iota({3, 1}), c = iota({4});
  std::vector<Tensor> out = broadcast_tensors({a, c});
  REQUIRE(out.size() == 2);
  CHECK(vec(out[0].sizes()) == V{3, 4});
  CHECK(out[0].is_alias_of(a));
  CHECK(out[1].is_alias_of(c));
  CHECK(vec(out[1].strides()) == V{0, 1});

  Tensor xs = iota({2}), ys = iota({3});
  std::vector<Tensor> ij = meshgrid({xs, ys}, "ij"), xy = meshgrid({xs, ys}, "xy");
  CHECK(vec(ij[0].sizes()) == V{2, 3});
  CHECK(vec(xy[0].sizes()) == V{3, 2});
  CHECK(ij[0].is_alias_of(xs));
  CHECK(xy[1].is_alias_of(ys));
  CHECK(values(xy[0]) == D{0, 1, 0, 1, 0, 1});
  CHECK(values(xy[1]) == D{0, 0, 1, 1, 2, 2});
  CHECK(values(meshgrid({xs, ys})[1]) == values(ij[1]));
}

TEST_CASE("movedim and meshgrid: gradients come back through the views") {
  Tensor x = randn({2, 3}, DType::Float64).requires_grad_();
  Tensor w = randn({3, 2}, DType::Float64);
  (x.movedim(1, 0) * w).sum().backward();
  CHECK(values(x.grad()) == values(w.t().contiguous()));

  Tensor a = randn({2}, DType::Float64).requires_grad_(), b = randn({3}, DType::Float64).requires_grad_();
  std::vector<Tensor> g = meshgrid({a, b}, "xy");
  (g[0] + g[1] * 2).sum().backward();
  CHECK(values(a.grad()) == D{3, 3});
  CHECK(values(b.grad()) == D{4, 4, 4});
}

TEST_CASE("tril_ and triu_ write into self, return it, and refuse a bad input before writing") {
  Tensor x = iota({3, 3});
  Tensor r = tril_(x, -1);
  CHECK(r.is_same(x));
  CHECK(values(x) == D{0, 0, 0, 3, 0, 0, 6, 7, 0});
  Tensor y = iota({2, 3}).t();  // a transposed view writes through its own strides
  y.triu_(1);
  CHECK(values(y) == D{0, 3, 0, 0, 0, 0});
  Tensor v = iota({3});
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.tril_(), "tril", "2 dims");
  EXPECT_ERROR_UNCHANGED(v, ValueError, v.triu_(), "triu", "2 dims");
}

TEST_CASE("tril_: a leaf that requires grad is refused; a non-leaf records the triangle's gradient") {
  Tensor leaf = randn({3, 3}, DType::Float64).requires_grad_();
  CHECK_THROWS(leaf.tril_());
  Tensor x = leaf * 1;
  x.triu_(0);
  x.sum().backward();
  CHECK(values(leaf.grad()) == values(ones({3, 3}, DType::Float64).triu()));
}

TEST_CASE("repeat_interleave, tile and diag return fresh tensors, never views") {
  Tensor x = iota({2, 2});
  CHECK_FALSE(x.repeat_interleave(1).is_alias_of(x));
  CHECK_FALSE(x.repeat_interleave(1, 0).is_alias_of(x));
  CHECK_FALSE(x.tile({1}).is_alias_of(x));
  CHECK_FALSE(x.diag().is_alias_of(x));
  CHECK(values(x.repeat_interleave(2, 1)) == D{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(values(repeat_interleave(tensor(std::vector<int64_t>{2, 0, 1}, {3}))) == D{0, 0, 2});
}

TEST_CASE("repeat_interleave: bad repeats are typed errors naming the values") {
  Tensor x = iota({2, 3});
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.repeat_interleave(-1), "repeat_interleave", "-1");
  Tensor r = tensor(std::vector<int64_t>{1, -4, 2}, {3});
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.repeat_interleave(r, 1), "repeat_interleave", "-4");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.repeat_interleave(r, 0), "repeat_interleave", "3 values", "2 along dim 0");
}

TEST_CASE("Meta: the composites give shapes without data; repeat_interleave with tensor repeats needs output_size") {
  const TensorOptions meta = TensorOptions().device(kMeta);
  Tensor x = empty({2, 3, 4}, meta);
  CHECK(vec(x.movedim(0, 2).sizes()) == V{3, 4, 2});
  CHECK(vec(x.repeat_interleave(3, 1).sizes()) == V{2, 9, 4});
  CHECK(vec(x.tile({2, 1, 1, 1}).sizes()) == V{2, 2, 3, 4});
  CHECK(vec(diag_embed(x, 1).sizes()) == V{2, 3, 5, 5});
  CHECK(vec(diag(empty({4}, meta), -2).sizes()) == V{6, 6});
  CHECK(vec(tensordot(x, empty({4, 3, 5}, meta), {1, 2}, {1, 0}).sizes()) == V{2, 5});
  CHECK(vec(cdist(empty({7, 3}, meta), empty({30, 3}, meta)).sizes()) == V{7, 30});
  EXPECT_ERROR(NotImplementedError, x.repeat_interleave(empty({3}, meta.dtype(DType::Int64)), 1), "repeat_interleave",
               "Meta", "output_size");
  CHECK(vec(x.repeat_interleave(empty({3}, meta.dtype(DType::Int64)), 1, 7).sizes()) == V{2, 7, 4});
  EXPECT_ERROR(ValueError, repeat_interleave(empty({3}, meta.dtype(DType::Int64)), -1), "repeat_interleave", "-1");
}

TEST_CASE("diag, diag_embed and trace: small exact values") {
  Tensor v = tensor(std::vector<double>{1, 2}, {2}, DType::Float64);
  CHECK(values(diag(v, 1)) == D{0, 1, 0, 0, 0, 2, 0, 0, 0});
  CHECK(values(diag(v, -1)) == D{0, 0, 0, 1, 0, 0, 0, 2, 0});
  CHECK(values(diag(iota({3, 3}), 1)) == D{1, 5});
  CHECK(values(diag_embed(iota({2, 2}))) == D{0, 0, 0, 1, 2, 0, 0, 3});
  CHECK(iota({3, 3}, DType::Int32).trace().dtype() == DType::Int64);
  CHECK(values(iota({3, 3}).trace()) == D{12});
}

TEST_CASE("tensordot, kron and cdist: small exact values") {
  Tensor a = iota({2, 3}), b = iota({3, 2});
  CHECK(values(tensordot(a, b, 1)) == values(mm(a, b)));
  CHECK(values(tensordot(a, b, {0, 1}, {1, 0})) == D{0 * 0 + 1 * 2 + 2 * 4 + 3 * 1 + 4 * 3 + 5 * 5});
  EXPECT_ERROR(ValueError, tensordot(a, b, {0}, {0}), "tensordot", "size 2", "size 3");
  Tensor k = kron(tensor(std::vector<double>{1, 2}, {2}), tensor(std::vector<double>{1, 10}, {2}));
  CHECK(values(k) == D{1, 10, 2, 20});
  Tensor p = tensor(std::vector<double>{0, 0, 3, 4}, {2, 2}, DType::Float64);
  CHECK(values(cdist(p, p)) == D{0, 5, 5, 0});
  CHECK(values(cdist(p, p, 1)) == D{0, 7, 7, 0});
  CHECK(values(cdist(p, p, std::numeric_limits<double>::infinity())) == D{0, 4, 4, 0});
  // The matrix-product form rounds a zero distance to sqrt(1e-30), not NaN.
  const D mm_form = values(cdist(p, p, 2, 1));
  CHECK(mm_form[0] < 1e-12);
  CHECK(mm_form[1] == doctest::Approx(5));
  EXPECT_ERROR(ValueError, cdist(p, p, -0.5), "cdist", "-0.5");
}

TEST_CASE("einsum: attention's contraction is one bmm over views, with no copy") {
  Tensor q = randn({2, 3, 5, 8}), k = randn({2, 3, 6, 8});
  dispatch::Tracer tr;
  Tensor s = einsum("bhqd,bhkd->bhqk", {q, k});
  int bmms = 0, copies = 0;
  for (const auto& c : tr.calls()) {
    bmms += c.op == "aten::bmm";
    copies += c.op == "aten::copy_";
  }
  CHECK(bmms == 1);
  CHECK(copies == 0);
  CHECK(vec(s.sizes()) == V{2, 3, 5, 6});
}

TEST_CASE("einsum: diagonals, sums over one operand's labels, broadcasting, and gradients") {
  Tensor sq = tensor(std::vector<double>{1, 2, 3, 4}, {2, 2}, DType::Float64);
  CHECK(values(einsum("ii->i", {sq})) == D{1, 4});
  CHECK(values(einsum("ii", {sq})) == D{5});
  CHECK(values(einsum("ij->", {sq})) == D{10});
  CHECK(values(einsum("ij,kl->ik", {sq, sq})) == D{3 * 3, 3 * 7, 7 * 3, 7 * 7});
  CHECK(vec(einsum("...ij,jk->...ik", {randn({4, 1, 2, 3}), randn({3, 5})}).sizes()) == V{4, 1, 2, 5});
  Tensor a = randn({3, 4}, DType::Float64).requires_grad_(), b = randn({4, 2}, DType::Float64);
  einsum("ij,jk->ik", {a, b}).sum().backward();
  CHECK(values(a.grad()) == values(sum(b, IntArrayRef{1}).unsqueeze(0).expand({3, 4}).contiguous()));
  EXPECT_ERROR(ValueError, einsum("ij,jk->ik", {sq, randn({3, 2}, DType::Float64)}), "einsum", "'j'");
}
