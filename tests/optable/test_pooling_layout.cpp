// Pooling and upsampling keep the input's layout (the op table checks values, not strides): a
// channels_last input gives channels_last results, indices and input gradients, an NCHW one
// NCHW ones, on the CPU and on Meta; max pooling's backward refuses indices outside the plane;
// extreme kernel sizes, paddings and scales are refused or clamped to the input; and the windows
// the CUDA backward gathers over hold every output that reads a position.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "anatomy/anatomy.h"
#include "anatomy/dispatch/ops/pooling_windows.h"

using namespace anatomy;

namespace {

// Every forward operator of the family with its backward, through autograd.
const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>>& forwards() {
  static const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> ops = {
      {"max_pool2d",
       [](const Tensor& x) {
         return max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
       }},
      {"avg_pool2d",
       [](const Tensor& x) {
         return avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, true, false);
       }},
      {"adaptive_avg_pool2d",
       [](const Tensor& x) {
         return adaptive_avg_pool2d(x, {3, 2});
       }},
      {"upsample_nearest2d",
       [](const Tensor& x) {
         return upsample_nearest2d(x, {9, 11});
       }},
      {"upsample_bilinear2d",
       [](const Tensor& x) {
         return upsample_bilinear2d(x, {9, 11}, false);
       }},
  };
  return ops;
}

}  // namespace

TEST_CASE("pooling and upsampling keep channels_last, forward and backward") {
  for (const auto& [name, op] : forwards()) {
    for (MemoryFormat format : {MemoryFormat::ChannelsLast, MemoryFormat::Contiguous}) {
      INFO(name, " ", to_string(format));
      Tensor x = randn({2, 5, 6, 7}).contiguous(format).requires_grad_();
      const Tensor y = op(x);
      CHECK(y.is_contiguous(format));
      y.backward(ones_like(y));
      CHECK(x.grad().is_contiguous(format));
      const Tensor meta = op(empty({2, 5, 6, 7}, TensorOptions().device(Device(DeviceType::Meta)), format));
      CHECK(meta.sizes() == y.sizes());
      CHECK(meta.is_contiguous(format));
    }
  }
}

TEST_CASE("max_pool2d_with_indices gives channels_last indices for a channels_last input") {
  const Tensor x = randn({2, 4, 5, 5}).contiguous(MemoryFormat::ChannelsLast);
  auto [y, i] = max_pool2d_with_indices(x, {2, 2});
  CHECK(y.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(i.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(i.dtype() == DType::Int64);
}

TEST_CASE("max_pool2d_with_indices_backward refuses indices outside the plane") {
  const Tensor x = randn({1, 2, 4, 4});
  auto [y, i] = max_pool2d_with_indices(x, {2, 2});
  const Tensor bad = i.clone();
  bad.view({-1}).select(0, 3).fill_(16);
  CHECK_THROWS_AS(max_pool2d_with_indices_backward(ones_like(y), x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, bad),
                  IndexError);
  CHECK_THROWS_AS(max_pool2d_with_indices_backward(ones({1, 2, 3, 2}), x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, i),
                  ValueError);
  CHECK_THROWS_AS(
      max_pool2d_with_indices_backward(ones_like(y), x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, i.to(DType::Int32)),
      TypeError);
}

TEST_CASE("max_pool2d_with_indices: a window with no input element gives the lowest value and index -1") {
  // Padding 1 with dilation 2 over rows of width 1: each window's taps are columns -1 and 1, and
  // the backward passes the windows over (their gradient goes nowhere).
  const Tensor x = randn({2, 3, 1}).requires_grad_();
  auto [y, i] = max_pool2d_with_indices(x, {1, 2}, {2, 1}, {0, 1}, {1, 2}, false);
  CHECK(y.sizes() == IntArrayRef{2, 2, 1});
  for (int64_t k = 0; k < y.numel(); ++k) {
    CHECK(i.view({-1}).select(0, k).item<int64_t>() == -1);
    CHECK(std::isinf(y.view({-1}).select(0, k).item<double>()));
  }
  y.sum().backward();
  CHECK(x.grad().abs().sum().item<double>() == 0.0);
  // An integer input gets the dtype's lowest value.
  auto [yi, ii] =
      max_pool2d_with_indices(arange(0, 6, 1, DType::Int32).reshape({2, 3, 1}), {1, 2}, {2, 1}, {0, 1}, {1, 2}, false);
  CHECK(yi.view({-1}).select(0, 0).item<int64_t>() == std::numeric_limits<int32_t>::lowest());
}

TEST_CASE("pooling and upsampling: extreme arguments are refused or clamped to the input") {
  const Tensor x = arange(0, 16, 1, DType::Float32).reshape({1, 1, 4, 4});
  // A kernel beyond the input: the output would be empty.
  CHECK_THROWS_AS(max_pool2d(x, {std::numeric_limits<int64_t>::max(), 2}), ValueError);
  // Windows of 2^62 elements, mostly padding, each covering the whole input: computed from
  // their bounds, not walked.
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  const Tensor y = max_pool2d(x, {big, big}, {1, 1}, {big / 2, big / 2});
  CHECK(y.sizes() == IntArrayRef({1, 1, 4, 4}));
  CHECK(y.eq(15).all().item<bool>());
  // Scales that point past the input (or, infinite, nowhere) read its edge pixels.
  const Tensor n = upsample_nearest2d(x, {3, 3}, 1e-300, 1e-300);
  CHECK(n.min().item<double>() >= 0);
  CHECK(n.max().item<double>() == 15);
  const Tensor b = upsample_bilinear2d(x, {3, 3}, false, 1e-300, 0.01);
  CHECK(b.min().item<double>() >= 0);
  CHECK(b.max().item<double>() == 15);
}

// The CUDA backward of max pooling gathers, for each input position, over the outputs that
// pooling::max_outputs_holding names: it must name every output whose taps hold the position
// (else a gradient is lost). Checked here against max_taps over every small configuration.
TEST_CASE("max pooling: the outputs that can hold an input position include every window that does") {
  int64_t configs = 0;
  for (int64_t in = 1; in <= 9; ++in) {
    for (int64_t kernel = 1; kernel <= 4; ++kernel) {
      for (int64_t stride = 1; stride <= 3; ++stride) {
        for (int64_t dilation = 1; dilation <= 3; ++dilation) {
          for (int64_t pad = 0; pad <= kernel / 2; ++pad) {
            for (bool ceil_mode : {false, true}) {
              const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
              if (span < 0) continue;
              int64_t out = (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
              if (ceil_mode && (out - 1) * stride >= in + pad) --out;
              pooling::Axis a;
              a.in = in, a.out = out, a.kernel = kernel, a.stride = stride, a.pad = pad, a.dilation = dilation;
              CAPTURE(in);
              CAPTURE(kernel);
              CAPTURE(stride);
              CAPTURE(dilation);
              CAPTURE(pad);
              CAPTURE(ceil_mode);
              const int64_t most = pooling::max_outputs_per_input(a, 64);
              for (int64_t i = 0; i < in; ++i) {
                const pooling::OutputRange r = pooling::max_outputs_holding(a, i);
                CHECK(r.last - r.first + 1 <= most);
                for (int64_t o = 0; o < out; ++o) {
                  const pooling::Taps t = pooling::max_taps(a, o);
                  const bool holds =
                      t.count > 0 && i >= t.first && (i - t.first) % t.step == 0 && (i - t.first) / t.step < t.count;
                  if (holds) CHECK((o >= r.first && o <= r.last));
                }
              }
              ++configs;
            }
          }
        }
      }
    }
  }
  CHECK(configs > 500);
  pooling::Axis wide;
  wide.in = 10, wide.out = 1, wide.kernel = int64_t{1} << 32, wide.stride = 1;
  CHECK(pooling::max_outputs_per_input(wide, 8) == 0);  // past 2^31: the scatter
  pooling::Axis three;
  three.in = 112, three.out = 56, three.kernel = 3, three.stride = 2, three.pad = 1;
  CHECK(pooling::max_outputs_per_input(three, 8) == 2);  // ResNet's stem pooling: 2 x 2 windows
}
