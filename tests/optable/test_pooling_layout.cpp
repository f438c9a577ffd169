// Pooling and upsampling keep the input's layout (the op table checks values, not strides): a
// channels_last input gives channels_last results, indices and input gradients, an NCHW one
// NCHW ones, on the CPU and on Meta; max pooling's backward refuses indices outside the plane;
// and extreme kernel sizes, paddings and scales are refused or clamped to the input.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "anatomy/anatomy.h"

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
