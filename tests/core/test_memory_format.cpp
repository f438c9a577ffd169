// Memory formats end to end: ChannelsLast3d, to(memory_format), and the layout every operator
// family gives its result, each case following PyTorch's rules (the element-wise plan's
// TensorIterator ordering, the reductions' and softmax's contiguous results, AccumulateGrad's
// layout contract).
#include <doctest/doctest.h>

#include "anatomy/anatomy.h"
#include "test_util.h"

using namespace anatomy;
using anatomy_test::V;
using anatomy_test::values;
using anatomy_test::vec;

namespace {

// NCHW (2, 3, 4, 5): row-major strides, and those of the same shape laid out NHWC.
const V kNchw{60, 20, 5, 1};
const V kNhwc{60, 1, 15, 3};

Tensor nchw() { return arange(120, DType::Float32).view({2, 3, 4, 5}).sub(Scalar(60)).div(Scalar(7)); }
Tensor nhwc() { return nchw().contiguous(MemoryFormat::ChannelsLast); }

// The same values in both layouts: what every case below checks beside the strides.
void check_same_values(const Tensor& got, const Tensor& want) {
  REQUIRE(vec(got.sizes()) == vec(want.sizes()));
  CHECK(allclose(got, want));
}

}  // namespace

// ---- channels_last_3d ----

TEST_CASE("memory format: channels_last_3d strides, contiguity and suggest_memory_format") {
  Tensor t = empty({2, 3, 4, 5, 6}, {}, MemoryFormat::ChannelsLast3d);
  CHECK(vec(t.strides()) == V{360, 1, 90, 18, 3});  // NDHWC: C fastest, then W, H, D, N
  CHECK(t.is_contiguous(MemoryFormat::ChannelsLast3d));
  CHECK_FALSE(t.is_contiguous());
  CHECK_FALSE(t.is_contiguous(MemoryFormat::ChannelsLast));  // a 4-D format
  CHECK(t.is_non_overlapping_and_dense());
  CHECK(suggest_memory_format(t) == MemoryFormat::ChannelsLast3d);

  Tensor c = zeros({2, 3, 4, 5, 6});
  CHECK_FALSE(c.is_contiguous(MemoryFormat::ChannelsLast3d));
  CHECK(suggest_memory_format(c) == MemoryFormat::Contiguous);
  // NDHWC memory permuted to NCDHW order.
  CHECK(zeros({2, 4, 5, 6, 3}).permute({0, 4, 1, 2, 3}).is_contiguous(MemoryFormat::ChannelsLast3d));
  // Not 5-D: never channels_last_3d.
  CHECK_FALSE(zeros({2, 3, 4, 5}).is_contiguous(MemoryFormat::ChannelsLast3d));
  EXPECT_ERROR(ValueError, empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast3d), "channels_last_3d", "5-D",
               "[2, 3, 4, 5]");
  EXPECT_ERROR(ValueError, empty({2, 3, 4, 5, 6}, {}, MemoryFormat::ChannelsLast), "channels_last", "4-D");
}

TEST_CASE("memory format: channels_last_3d with size-1 dims follows is_channels_last_strides_3d") {
  // One channel: contiguous and channels_last_3d at once; the strides are ordered NCDHW.
  Tensor c1 = zeros({2, 1, 4, 5, 6});
  CHECK(c1.is_contiguous());
  CHECK(c1.is_contiguous(MemoryFormat::ChannelsLast3d));
  CHECK(suggest_memory_format(c1) == MemoryFormat::Contiguous);
  // (N, C, 1, 1, 1) laid out NDHWC: contiguous too (only size-1 dims differ), but its strides are
  // ordered NDHWC, so PyTorch suggests channels_last_3d.
  Tensor pooled = empty({2, 3, 1, 1, 1}, {}, MemoryFormat::ChannelsLast3d);
  CHECK(vec(pooled.strides()) == V{3, 1, 3, 3, 3});
  CHECK(pooled.is_contiguous());
  CHECK(suggest_memory_format(pooled) == MemoryFormat::ChannelsLast3d);
  CHECK(suggest_memory_format(zeros({2, 3, 1, 1, 1})) == MemoryFormat::Contiguous);
  // N1111: equal strides on N and C are called NCDHW.
  CHECK(suggest_memory_format(empty({3, 1, 1, 1, 1}, {}, MemoryFormat::ChannelsLast3d)) == MemoryFormat::Contiguous);
  // Empty dims are never channels_last_3d by strides.
  CHECK(suggest_memory_format(empty({2, 3, 0, 5, 6}, {}, MemoryFormat::ChannelsLast3d)) == MemoryFormat::Contiguous);
}

TEST_CASE("memory format: contiguous, clone and the _like factories with channels_last_3d") {
  Tensor x = arange(720, DType::Float32).view({2, 3, 4, 5, 6});
  Tensor cl = x.contiguous(MemoryFormat::ChannelsLast3d);
  CHECK(vec(cl.strides()) == V{360, 1, 90, 18, 3});
  CHECK(values(cl) == values(x));
  CHECK(cl.contiguous(MemoryFormat::ChannelsLast3d).is_same(cl));
  CHECK(vec(cl.contiguous().strides()) == V{360, 120, 30, 6, 1});
  CHECK(vec(cl.clone().strides()) == V{360, 1, 90, 18, 3});
  CHECK(vec(x.clone(MemoryFormat::ChannelsLast3d).strides()) == V{360, 1, 90, 18, 3});
  CHECK(vec(empty_like(cl).strides()) == V{360, 1, 90, 18, 3});
  CHECK(vec(zeros_like(cl).strides()) == V{360, 1, 90, 18, 3});
  CHECK(vec(empty_like(x, {}, MemoryFormat::ChannelsLast3d).strides()) == V{360, 1, 90, 18, 3});
  // A slice of it is not dense: clone picks the layout suggest_memory_format names.
  Tensor sliced = cl.slice(4, 0, 4);
  CHECK(suggest_memory_format(sliced) == MemoryFormat::ChannelsLast3d);
  CHECK(vec(sliced.clone().strides()) == V{240, 1, 60, 12, 3});
  CHECK(values(sliced.clone()) == values(sliced));
  // A format of another rank names the operator called, the format and the shape.
  EXPECT_ERROR(ValueError, zeros({2, 3}).contiguous(MemoryFormat::ChannelsLast3d), "contiguous", "channels_last_3d",
               "5-D", "[2, 3]");
  EXPECT_ERROR(ValueError, zeros({2, 3, 4, 5}).clone(MemoryFormat::ChannelsLast3d), "clone", "channels_last_3d");
  EXPECT_ERROR(ValueError, empty_like(zeros({2, 3, 4, 5}), {}, MemoryFormat::ChannelsLast3d), "empty_like",
               "channels_last_3d");
  EXPECT_ERROR(ValueError, zeros({2, 3, 4, 5, 6}).clone(MemoryFormat::ChannelsLast), "clone", "channels_last", "4-D");
}

TEST_CASE("memory format: the Meta backend lays out channels_last_3d and propagates it alike") {
  const Device meta("meta");
  Tensor m = empty({2, 3, 4, 5, 6}, meta, MemoryFormat::ChannelsLast3d);
  CHECK(vec(m.strides()) == V{360, 1, 90, 18, 3});
  CHECK(vec(empty_like(m).strides()) == V{360, 1, 90, 18, 3});
  CHECK(vec(exp(m).strides()) == V{360, 1, 90, 18, 3});
  CHECK(vec((empty({3, 1, 1, 1}, meta) + m).strides()) == V{360, 1, 90, 18, 3});
  Tensor nhwc_meta = empty({2, 3, 4, 5}, meta, MemoryFormat::ChannelsLast);
  CHECK(vec((nhwc_meta + empty({2, 3, 4, 5}, meta)).strides()) == kNhwc);
  CHECK(vec(nhwc_meta.to(MemoryFormat::Contiguous).strides()) == kNchw);
}

// ---- to(memory_format) ----

TEST_CASE("memory format: to(memory_format) copies only when the layout changes") {
  Tensor x = nchw();
  Tensor cl = x.to(MemoryFormat::ChannelsLast);
  CHECK(vec(cl.strides()) == kNhwc);
  CHECK_FALSE(cl.is_alias_of(x));
  check_same_values(cl, x);
  CHECK(cl.to(MemoryFormat::ChannelsLast).is_same(cl));
  CHECK(x.to(MemoryFormat::Contiguous).is_same(x));
  CHECK(x.to(MemoryFormat::Preserve).is_same(x));
  CHECK_FALSE(cl.to(MemoryFormat::ChannelsLast, /*copy=*/true).is_same(cl));
  CHECK(vec(cl.to(MemoryFormat::Contiguous).strides()) == kNchw);
  // As PyTorch's to_will_alias: the layout is compared through suggest_memory_format, so a
  // transposed matrix is already "contiguous_format" and comes back as is.
  Tensor t = zeros({3, 4}).t();
  CHECK(t.to(MemoryFormat::Contiguous).is_same(t));
  EXPECT_ERROR(ValueError, zeros({2, 3, 4}).to(MemoryFormat::ChannelsLast), "to", "channels_last", "4-D", "[2, 3, 4]");
  Tensor x5 = zeros({1, 2, 3, 4, 5});
  CHECK(x5.to(MemoryFormat::ChannelsLast3d).is_contiguous(MemoryFormat::ChannelsLast3d));
}

TEST_CASE("memory format: to(dtype) keeps channels_last, and takes a memory_format") {
  Tensor cl = nhwc();
  Tensor d = cl.to(DType::Float64);
  CHECK(d.dtype() == DType::Float64);
  CHECK(vec(d.strides()) == kNhwc);  // Preserve: a dense layout is kept
  check_same_values(d, nchw().to(DType::Float64));
  Tensor h = nchw().to(DType::Float16, false, false, MemoryFormat::ChannelsLast);
  CHECK(h.dtype() == DType::Float16);
  CHECK(vec(h.strides()) == kNhwc);
  Tensor back = cl.to(kCPU, DType::Float32, false, false, MemoryFormat::Contiguous);
  CHECK(vec(back.strides()) == kNchw);
  check_same_values(back, cl);
  // _to_copy itself, as autograd and the Python binding call it.
  CHECK(vec(_to_copy(nchw(), DType::Float64, std::nullopt, false, MemoryFormat::ChannelsLast).strides()) == kNhwc);
}

// ---- element-wise families ----

TEST_CASE("memory format: unary ops keep channels_last, dense or sliced") {
  Tensor cl = nhwc();
  for (const Tensor& r : {exp(cl), neg(cl), abs(cl), sqrt(abs(cl)), cl.sign()}) {
    CHECK(vec(r.strides()) == kNhwc);
  }
  check_same_values(exp(cl), exp(nchw()));
  // A slice is not dense: the result is ordered like it (NHWC), dense, as TensorIterator does.
  Tensor sliced = cl.slice(3, 0, 4);
  Tensor r = exp(sliced);
  CHECK(vec(r.strides()) == V{48, 1, 12, 3});
  check_same_values(r, exp(nchw().slice(3, 0, 4)));
  CHECK(vec(exp(nchw().slice(3, 0, 4)).strides()) == V{48, 16, 4, 1});
}

TEST_CASE("memory format: binary ops order the result like the first input that decides") {
  Tensor cl = nhwc(), c = nchw();
  // Both dense, different layouts: the first input wins.
  CHECK(vec((cl + c).strides()) == kNhwc);
  CHECK(vec((c + cl).strides()) == kNchw);
  CHECK(vec((cl * cl).strides()) == kNhwc);
  check_same_values(cl + c, c + c);
  // A (C, 1, 1) bias, before or after: its broadcast dims tell nothing, the image decides.
  Tensor bias = tensor({0.5, -1.0, 2.0}).view({3, 1, 1});
  CHECK(vec((cl + bias).strides()) == kNhwc);
  CHECK(vec((bias + cl).strides()) == kNhwc);
  CHECK(vec((bias + c).strides()) == kNchw);
  CHECK(vec(mul(tensor({0.5, -1.0, 2.0}).view({1, 3, 1, 1}), cl).strides()) == kNhwc);
  check_same_values(bias + cl, bias + c);
  // A first input broadcast on W only still orders H inside C: the result is NCHW, as PyTorch's.
  Tensor row = ones({2, 3, 4, 1});
  CHECK(vec((row + cl).strides()) == kNchw);
  CHECK(vec((cl + row).strides()) == kNhwc);
  // Comparisons allocate bool results the same way.
  Tensor greater = gt(cl, c);
  CHECK(greater.dtype() == DType::Bool);
  CHECK(vec(greater.strides()) == kNhwc);
}

TEST_CASE("memory format: scalar ops and casts keep channels_last") {
  Tensor cl = nhwc();
  CHECK(vec((cl * Scalar(2)).strides()) == kNhwc);
  CHECK(vec((cl + scalar_tensor(1.5)).strides()) == kNhwc);
  CHECK(vec(pow(cl, Scalar(2)).strides()) == kNhwc);
  // Integer input, float result (true division): promoted, still NHWC.
  Tensor i = arange(120, DType::Int64).view({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  Tensor q = i / Scalar(2);
  CHECK(q.dtype() == DType::Float32);
  CHECK(vec(q.strides()) == kNhwc);
  // Mixed dtypes: the cast input keeps its layout too.
  Tensor mixed = i + cl;
  CHECK(mixed.dtype() == DType::Float32);
  CHECK(vec(mixed.strides()) == kNhwc);
}

TEST_CASE("memory format: ternary ops (where, addcmul, lerp, clamp with tensors)") {
  Tensor cl = nhwc(), c = nchw();
  Tensor mask = gt(cl, Scalar(0));  // NHWC
  CHECK(vec(where(mask, cl, c).strides()) == kNhwc);
  // The condition comes first in where's plan, as in PyTorch's.
  CHECK(vec(where(gt(c, Scalar(0)), cl, cl).strides()) == kNchw);
  check_same_values(where(mask, cl, c), where(gt(c, Scalar(0)), c, c));
  CHECK(vec(addcmul(cl, c, c, Scalar(0.5)).strides()) == kNhwc);
  CHECK(vec(addcmul(c, cl, cl).strides()) == kNchw);
  check_same_values(addcmul(cl, c, c, Scalar(0.5)), addcmul(c, c, c, Scalar(0.5)));
  CHECK(vec(lerp(cl, c, Scalar(0.25)).strides()) == kNhwc);
  CHECK(vec(lerp(cl, c, full({3, 1, 1}, 0.25)).strides()) == kNhwc);
  check_same_values(lerp(cl, c, Scalar(0.25)), lerp(c, c, Scalar(0.25)));
  Tensor lo = full({3, 1, 1}, -0.5), hi = full({3, 1, 1}, 0.5);
  Tensor clamped = clamp(cl, std::optional<Tensor>(lo), std::optional<Tensor>(hi));
  CHECK(vec(clamped.strides()) == kNhwc);
  check_same_values(clamped, clamp(c, std::optional<Scalar>(-0.5), std::optional<Scalar>(0.5)));
  CHECK(vec(clamp(cl, std::optional<Scalar>(0)).strides()) == kNhwc);
}

TEST_CASE("memory format: in-place ops, copy_ and clone keep the destination's layout") {
  Tensor cl = nhwc(), c = nchw();
  Tensor a = cl.clone();
  a.add_(c);
  CHECK(vec(a.strides()) == kNhwc);
  check_same_values(a, c + c);
  Tensor b = c.clone();
  b.mul_(cl);
  CHECK(vec(b.strides()) == kNchw);
  check_same_values(b, c * c);
  Tensor r = cl.clone();
  relu_(r);
  CHECK(vec(r.strides()) == kNhwc);
  check_same_values(r, relu(c));
  // copy_ writes into the destination's layout, from either.
  Tensor dst = empty({2, 3, 4, 5});
  dst.copy_(cl);
  CHECK(vec(dst.strides()) == kNchw);
  check_same_values(dst, c);
  Tensor dst_cl = empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast);
  dst_cl.copy_(c);
  CHECK(vec(dst_cl.strides()) == kNhwc);
  check_same_values(dst_cl, c);
  CHECK(vec(cl.clone().strides()) == kNhwc);
  CHECK(vec(cl.clone(MemoryFormat::Contiguous).strides()) == kNchw);
}

TEST_CASE("memory format: activations and dropout keep channels_last") {
  Tensor cl = nhwc(), c = nchw();
  for (const Tensor& r : {relu(cl), gelu(cl), gelu(cl, "tanh"), silu(cl), hardswish(cl), sigmoid(cl), tanh(cl),
                          leaky_relu(cl, Scalar(0.1)), hardsigmoid(cl), mish(cl)}) {
    CHECK(vec(r.strides()) == kNhwc);
  }
  check_same_values(gelu(cl), gelu(c));
  check_same_values(hardswish(cl), hardswish(c));
  manual_seed(3);
  auto [out, mask] = native_dropout(cl, 0.5, true);
  CHECK(vec(out.strides()) == kNhwc);
  CHECK(vec(mask.strides()) == kNhwc);
  check_same_values(out, cl * mask * Scalar(2.0));
  CHECK(vec(dropout(cl, 0.5, true).strides()) == kNhwc);
  CHECK(dropout(cl, 0.5, false).is_same(cl));
}

// ---- operators whose results PyTorch allocates contiguous ----

TEST_CASE("memory format: softmax and log_softmax over the channels come back contiguous, as PyTorch's") {
  // PyTorch's _softmax and _log_softmax allocate LEGACY_CONTIGUOUS_MEMORY_FORMAT on every device.
  Tensor cl = nhwc(), c = nchw();
  Tensor s = softmax(cl, 1), ls = log_softmax(cl, 1);
  CHECK(vec(s.strides()) == kNchw);
  CHECK(vec(ls.strides()) == kNchw);
  check_same_values(s, softmax(c, 1));
  check_same_values(ls, log_softmax(c, 1));
}

TEST_CASE("memory format: reductions over (2, 3) with keepdim give (N, C, 1, 1), contiguous as PyTorch's") {
  Tensor cl = nhwc(), c = nchw();
  for (const Tensor& r :
       {sum(cl, IntArrayRef{2, 3}, true), mean(cl, IntArrayRef{2, 3}, true), amax(cl, IntArrayRef{2, 3}, true)}) {
    CHECK(vec(r.sizes()) == V{2, 3, 1, 1});
    // One memory order for both layouts; PyTorch's row-major strides, so that the result does
    // not suggest channels_last.
    CHECK(vec(r.strides()) == V{3, 1, 1, 1});
    CHECK(r.is_contiguous());
    CHECK(r.is_contiguous(MemoryFormat::ChannelsLast));
    CHECK(suggest_memory_format(r) == MemoryFormat::Contiguous);
  }
  check_same_values(mean(cl, IntArrayRef{2, 3}, true), mean(c, IntArrayRef{2, 3}, true));
  check_same_values(sum(cl, IntArrayRef{2, 3}), sum(c, IntArrayRef{2, 3}));
  // The pooled statistics broadcast back over the image: the image decides the layout.
  CHECK(vec((cl - mean(cl, IntArrayRef{2, 3}, true)).strides()) == kNhwc);
}

// ---- autograd ----

TEST_CASE("memory format: the gradient of a channels_last leaf is channels_last") {
  Tensor x = nhwc().requires_grad_();
  Tensor w = nchw().requires_grad_();  // contiguous leaf
  Tensor y = (x * w).relu().mul(Scalar(3)).sum();
  y.backward();
  // The gradients reaching the leaves are row-major (sum's gradient is an expanded scalar, which
  // orders nothing); the layout contract copies x's into x's layout, as PyTorch's
  // AccumulateGrad does, and keeps w's.
  REQUIRE(x.grad().defined());
  CHECK(vec(x.grad().strides()) == kNhwc);
  CHECK(vec(w.grad().strides()) == kNchw);
  Tensor relu_mask = gt(x.detach() * w.detach(), Scalar(0)).to(DType::Float32);
  check_same_values(x.grad(), relu_mask * w.detach() * Scalar(3));
  check_same_values(w.grad(), relu_mask * x.detach() * Scalar(3));
  // A second backward accumulates in the same layout.
  (x * w).relu().mul(Scalar(3)).sum().backward();
  CHECK(vec(x.grad().strides()) == kNhwc);
  check_same_values(x.grad(), relu_mask * w.detach() * Scalar(6));
}

TEST_CASE("memory format: a contiguous gradient reaching a channels_last leaf is laid out like the leaf") {
  // softmax's gradient is contiguous (its result is); the .grad of the NHWC leaf is NHWC.
  Tensor x = nhwc().requires_grad_();
  Tensor weights = nchw();
  (softmax(x, 1) * weights).sum().backward();
  REQUIRE(x.grad().defined());
  CHECK(vec(x.grad().strides()) == kNhwc);
  Tensor xc = nchw().requires_grad_();
  (softmax(xc, 1) * weights).sum().backward();
  check_same_values(x.grad(), xc.grad());
  CHECK(vec(xc.grad().strides()) == kNchw);
}

TEST_CASE("memory format: .grad follows the leaf's layout, not the incoming gradient's") {
  // An NHWC gradient reaching an NHWC leaf becomes its .grad as is; reaching an NCHW leaf it is
  // copied into NCHW.
  Tensor g = nhwc();
  Tensor x = nhwc().requires_grad_();
  (x * Scalar(2)).backward(g);
  CHECK(vec(x.grad().strides()) == kNhwc);
  check_same_values(x.grad(), g * Scalar(2));
  Tensor y = nchw().requires_grad_();
  (y * Scalar(2)).backward(g);
  CHECK(vec(y.grad().strides()) == kNchw);
  check_same_values(y.grad(), g * Scalar(2));
  // A leaf that is not dense gets a row-major .grad.
  Tensor base = zeros({2, 3, 4, 6});
  Tensor z = base.slice(3, 0, 5).detach().requires_grad_();
  REQUIRE_FALSE(z.is_non_overlapping_and_dense());
  (z * Scalar(2)).backward(g);
  CHECK(vec(z.grad().strides()) == kNchw);
  check_same_values(z.grad(), g * Scalar(2));
}

TEST_CASE("memory format: with create_graph the .grad of a channels_last leaf is channels_last and differentiable") {
  Tensor x = nhwc().requires_grad_();
  (softmax(x, 1) * nchw()).sum().backward(Tensor(), false, /*create_graph=*/true);
  REQUIRE(x.grad().defined());
  CHECK(vec(x.grad().strides()) == kNhwc);
  CHECK(x.grad().requires_grad());
  Tensor xc = nchw().requires_grad_();
  (softmax(xc, 1) * nchw()).sum().backward(Tensor(), false, true);
  check_same_values(x.grad(), xc.grad());
  // The copy into the leaf's layout is part of the graph: the second derivative flows through it.
  Tensor g1 = x.grad();
  Tensor g2 = xc.grad();
  x.set_grad(Tensor());
  xc.set_grad(Tensor());
  (g1 * g1).sum().backward();
  (g2 * g2).sum().backward();
  REQUIRE(x.grad().defined());
  check_same_values(x.grad(), xc.grad());
}
