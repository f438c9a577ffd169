// The convolutions beyond what their op-table entries check: the conv1d / conv2d / conv3d /
// conv_transpose spellings (unbatched input, "same" and "valid" padding), the output layout,
// oneDNN's fp32 passes against the composite's fp64, the double backward on the CPU kernels, and
// the spellings' own errors.
#include <doctest/doctest.h>

#include "anatomy/anatomy.h"
#include "test_util.h"

using namespace anatomy;
using anatomy_test::vec;

namespace {

bool close(const Tensor& a, const Tensor& b, double tol) {
  return allclose(a.to(DType::Float64), b.to(DType::Float64), tol, tol);
}

}  // namespace

TEST_CASE("conv2d: padding='same' keeps the size, the extra element on the right, as PyTorch") {
  const Tensor x = randn({2, 3, 7, 6}), w = randn({4, 3, 4, 3});
  const Tensor same = conv2d(x, w, std::nullopt, {1}, "same");
  CHECK(vec(same.sizes()) == std::vector<int64_t>{2, 4, 7, 6});
  // Kernel height 4: 3 rows of padding in all, 1 above and 2 below.
  const Tensor explicit_pad = conv2d(constant_pad_nd(x, {1, 1, 1, 2}), w);
  CHECK(close(same, explicit_pad, 1e-5));
  CHECK(vec(conv2d(x, w, std::nullopt, {1}, "valid").sizes()) == std::vector<int64_t>{2, 4, 4, 4});
  const std::string mode = "valid";
  CHECK(vec(conv2d(x, w, std::nullopt, {1}, mode).sizes()) == std::vector<int64_t>{2, 4, 4, 4});
  // A braced list of two ints is the int-list overload, not a (pointer, length) string.
  CHECK(vec(conv2d(x, w, std::nullopt, {1, 1}, {0, 0}).sizes()) == std::vector<int64_t>{2, 4, 4, 4});
  EXPECT_ERROR(ValueError, conv2d(x, w, std::nullopt, {2}, "same"), "conv2d", "same", "stride");
  EXPECT_ERROR(ValueError, conv2d(x, w, std::nullopt, {1}, "full"), "conv2d", "full");
  const Tensor x1 = randn({2, 3, 9}), w1 = randn({5, 3, 4});
  CHECK(vec(conv1d(x1, w1, std::nullopt, {1}, "same", {2}).sizes()) == std::vector<int64_t>{2, 5, 9});
}

TEST_CASE("conv1d, conv2d, conv3d and conv_transpose2d take unbatched input") {
  const Tensor x = randn({3, 6, 5}), w = randn({4, 3, 3, 3});
  const Tensor one = conv2d(x, w, std::nullopt, {1}, {1});
  CHECK(vec(one.sizes()) == std::vector<int64_t>{4, 6, 5});
  CHECK(close(one, conv2d(x.unsqueeze(0), w, std::nullopt, {1}, {1}).squeeze(0), 1e-6));
  CHECK(vec(conv1d(randn({3, 8}), randn({2, 3, 3})).sizes()) == std::vector<int64_t>{2, 6});
  CHECK(vec(conv3d(randn({2, 4, 4, 4}), randn({3, 2, 2, 2, 2})).sizes()) == std::vector<int64_t>{3, 3, 3, 3});
  const Tensor t = conv_transpose2d(randn({4, 3, 3}), randn({4, 2, 3, 3}), std::nullopt, {2}, {1}, {1});
  CHECK(vec(t.sizes()) == std::vector<int64_t>{2, 6, 6});
  EXPECT_ERROR(ValueError, conv2d(randn({5, 5}), w), "conv2d", "3-D", "4-D");
}

TEST_CASE("convolution: channels_last in (input or weight) gives channels_last out, else contiguous") {
  const Tensor x = randn({2, 3, 6, 6}), w = randn({4, 3, 3, 3});
  const Tensor cl = x.contiguous(MemoryFormat::ChannelsLast);
  for (DType t : {DType::Float32, DType::Float64}) {
    CHECK(conv2d(cl.to(t), w.to(t)).is_contiguous(MemoryFormat::ChannelsLast));
    CHECK(conv2d(x.to(t), w.to(t).contiguous(MemoryFormat::ChannelsLast)).is_contiguous(MemoryFormat::ChannelsLast));
    CHECK(conv2d(x.to(t), w.to(t)).is_contiguous());
  }
  CHECK(close(conv2d(cl, w), conv2d(x, w), 1e-5));
}

TEST_CASE("convolution: the CPU's fp32 and bf16 passes (oneDNN) match the fp64 composite") {
  struct Case {
    std::vector<int64_t> x, w, stride, padding, dilation, output_padding;
    bool transposed;
    int64_t groups;
  };
  const std::vector<Case> cases = {
      {{4, 8, 14, 13}, {16, 8, 3, 3}, {1}, {1}, {1}, {0}, false, 1},
      {{4, 8, 14, 13}, {16, 4, 3, 3}, {2}, {1}, {2}, {0}, false, 2},
      {{2, 8, 9, 9}, {8, 1, 5, 5}, {1}, {2}, {1}, {0}, false, 8},
      {{2, 8, 7, 6}, {8, 4, 3, 3}, {2}, {1}, {1}, {1}, true, 1},
      {{2, 8, 7, 6}, {8, 2, 4, 4}, {2}, {1}, {1}, {0}, true, 2},
  };
  for (const Case& c : cases) {
    for (bool channels_last : {false, true}) {
      Tensor x = randn(c.x), w = randn(c.w) * 0.2;
      if (channels_last) x = x.contiguous(MemoryFormat::ChannelsLast);
      const Tensor x64 = x.to(DType::Float64).requires_grad_(), w64 = w.to(DType::Float64).requires_grad_();
      const Tensor y64 = convolution(x64, w64, std::nullopt, c.stride, c.padding, c.dilation, c.transposed,
                                     c.output_padding, c.groups);
      const Tensor g = randn(y64.sizes());
      y64.backward(g.to(DType::Float64));
      for (auto [t, tol] : {std::pair{DType::Float32, 1e-4}, std::pair{DType::BFloat16, 8e-2}}) {
        CAPTURE(c.x);
        CAPTURE(channels_last);
        CAPTURE(name(t));
        const Tensor xt = x.to(t).detach().requires_grad_(), wt = w.to(t).detach().requires_grad_();
        const Tensor y = convolution(xt, wt, std::nullopt, c.stride, c.padding, c.dilation, c.transposed,
                                     c.output_padding, c.groups);
        CHECK(y.dtype() == t);
        CHECK(close(y, y64, tol));
        y.backward(g.to(t));
        CHECK(close(xt.grad(), x64.grad(), tol));
        CHECK(close(wt.grad(), w64.grad(), tol * 4));
      }
    }
  }
}

TEST_CASE("convolution: an output_padding of the stride or more (below the dilation) passes gradcheck") {
  // The last output rows are reached by no input: the input gradient's plain convolution gives
  // positions past the input's end, which must be cropped.
  const Tensor x = randn({1, 2, 4, 3}, DType::Float64).requires_grad_();
  const Tensor w = randn({2, 3, 3, 2}, DType::Float64).requires_grad_();
  const Tensor b = randn({3}, DType::Float64).requires_grad_();
  for (bool channels_last : {false, true}) {
    CAPTURE(channels_last);
    const Tensor xi = channels_last ? x.detach().contiguous(MemoryFormat::ChannelsLast).requires_grad_() : x;
    const auto fn = [](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{convolution(in[0], in[1], in[2], {1, 2}, {0, 1}, {3, 3}, true, {1, 2}, 1)};
    };
    CHECK(vec(fn({xi, w, b})[0].sizes()) == std::vector<int64_t>{1, 3, 11, 8});
    CHECK(autograd::gradcheck_report(fn, {xi, w, b}).empty());
    const Tensor y = fn({xi, w, b})[0];
    const Tensor gx = autograd::grad({y.sum()}, {xi})[0];
    CHECK(vec(gx.sizes()) == vec(xi.sizes()));
    if (channels_last) CHECK(gx.is_contiguous(MemoryFormat::ChannelsLast));
  }
}

TEST_CASE("convolution: the double backward on the fp32 kernels matches fp64") {
  const Tensor x = randn({2, 3, 6, 6}), w = randn({4, 3, 3, 3});
  auto second = [](const Tensor& xi, const Tensor& wi) {
    const Tensor xr = xi.detach().requires_grad_(), wr = wi.detach().requires_grad_();
    const Tensor y = conv2d(xr, wr, std::nullopt, {2}, {1});
    const Tensor gx = autograd::grad({(y * y).sum()}, {xr}, {}, std::nullopt, true)[0];
    return autograd::grad({(gx * gx).sum()}, {wr})[0];
  };
  CHECK(close(second(x, w), second(x.to(DType::Float64), w.to(DType::Float64)), 1e-3));
}

TEST_CASE("convolution: an empty batch gives an empty output and zero weight and bias gradients") {
  const Tensor x = randn({0, 3, 5, 5}).requires_grad_(), w = randn({4, 3, 3, 3}).requires_grad_(),
               b = randn({4}).requires_grad_();
  const Tensor y = conv2d(x, w, b, {1}, {1});
  CHECK(vec(y.sizes()) == std::vector<int64_t>{0, 4, 5, 5});
  y.sum().backward();
  CHECK(w.grad().abs().sum().item<float>() == 0);
  CHECK(b.grad().abs().sum().item<float>() == 0);
}
