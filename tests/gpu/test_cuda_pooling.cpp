// GPU tests of pooling and upsampling on CUDA against the CPU's: forward and backward of every
// operator, in NCHW, channels_last (kept: results and gradients stay channels_last) and offset
// inputs, every floating dtype (and integers for max pooling), ceil_mode, padding, dilation and
// the averaging options; max pooling's indices exactly; a bad index to max pooling's backward
// raised at the next wait; operands on two devices refused; and that nothing waits (sync-debug
// error mode).
#include <functional>
#include <string>
#include <vector>

#include "anatomy/cuda.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

struct Case {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
};

// The forward operators; their backward ones run through autograd below.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"max_pool2d 3x3 s2 p1",
       [](const Tensor& x) {
         return max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
       }},
      {"max_pool2d dilation ceil_mode",
       [](const Tensor& x) {
         return max_pool2d(x, {2, 3}, {2, 1}, {1, 1}, {2, 2}, true);
       }},
      {"avg_pool2d count_include_pad",
       [](const Tensor& x) {
         return avg_pool2d(x, {3, 3}, {2, 2}, {1, 1});
       }},
      {"avg_pool2d ceil_mode, not counting padding",
       [](const Tensor& x) {
         return avg_pool2d(x, {3, 2}, {2, 3}, {1, 1}, true, false);
       }},
      {"avg_pool2d divisor_override",
       [](const Tensor& x) {
         return avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, false, true, 5);
       }},
      {"adaptive_avg_pool2d",
       [](const Tensor& x) {
         return adaptive_avg_pool2d(x, {5, 3});
       }},
      {"upsample_nearest2d",
       [](const Tensor& x) {
         return upsample_nearest2d(x, {13, 17});
       }},
      {"upsample_nearest2d scales",
       [](const Tensor& x) {
         return upsample_nearest2d(x, {18, 20}, 2.0, 2.5);
       }},
      {"upsample_bilinear2d",
       [](const Tensor& x) {
         return upsample_bilinear2d(x, {13, 17}, false);
       }},
      {"upsample_bilinear2d align_corners",
       [](const Tensor& x) {
         return upsample_bilinear2d(x, {5, 17}, true);
       }},
  };
  return all;
}

// The inputs each case runs on (N, C, 9, 8): NCHW, channels_last, and an offset slice.
std::vector<std::pair<std::string, Tensor>> inputs(DType d) {
  const Tensor base = gpu_test::sample({2, 24, 11, 9}, d);
  return {{"NCHW", base.slice(2, 0, 9).slice(3, 0, 8).contiguous()},
          {"channels_last", base.slice(2, 0, 9).slice(3, 0, 8).contiguous(MemoryFormat::ChannelsLast)},
          {"offset", base.slice(2, 2, 11).slice(3, 1, 9)}};
}

}  // namespace

TEST_CASE("cuda pooling and upsampling: forward and backward against the CPU, layouts kept") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::kFloatingDtypes) {
    CAPTURE(name(d));
    const double rtol = gpu_test::float_rtol(d, 1e-5, 1e-12);
    for (const auto& [layout, x] : inputs(d)) {
      CAPTURE(layout);
      for (const Case& c : cases()) {
        CAPTURE(c.name);
        Tensor xc = x.detach().requires_grad_(d != DType::Float16 && d != DType::BFloat16);
        Tensor xg = gpu_test::to_cuda_same_layout(x.detach()).requires_grad_(xc.requires_grad());
        const Tensor yc = c.op(xc), yg = c.op(xg);
        CHECK(yg.is_cuda());
        CHECK(gpu_test::close_values(yg, yc, rtol) == "");
        const MemoryFormat f =
            layout == std::string("channels_last") ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
        if (layout != std::string("offset")) CHECK(yg.is_contiguous(f));
        if (!xc.requires_grad()) continue;
        const Tensor g = gpu_test::sample(yc.sizes(), d);
        yc.backward(g);
        yg.backward(g.to(kCuda));
        CHECK(gpu_test::close_values(xg.grad(), xc.grad(), rtol) == "");
        if (layout != std::string("offset")) CHECK(xg.grad().is_contiguous(f));
      }
    }
  }
}

TEST_CASE("cuda pooling: fp16 and bf16 backward against the CPU") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float16, DType::BFloat16}) {
    CAPTURE(name(d));
    const Tensor x = gpu_test::sample({2, 16, 9, 8}, d).contiguous(MemoryFormat::ChannelsLast);
    auto [y, i] = max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1});
    const Tensor g = gpu_test::sample(y.sizes(), d);
    const Tensor want = max_pool2d_with_indices_backward(g, x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, i);
    const Tensor got =
        max_pool2d_with_indices_backward(g.to(kCuda), x.to(kCuda), {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, i.to(kCuda));
    CHECK(gpu_test::close_values(got, want, gpu_test::float_rtol(d, 0, 0)) == "");
    const Tensor want_avg = avg_pool2d_backward(g, x, {3, 3}, {2, 2}, {1, 1}, false, true, std::nullopt);
    const Tensor got_avg =
        avg_pool2d_backward(g.to(kCuda), x.to(kCuda), {3, 3}, {2, 2}, {1, 1}, false, true, std::nullopt);
    CHECK(gpu_test::close_values(got_avg, want_avg, gpu_test::float_rtol(d, 0, 0)) == "");
  }
}

TEST_CASE("cuda max_pool2d_with_indices: integer dtypes, indices exactly, NaN wins") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::UInt8, DType::Int32, DType::Int64, DType::Float32}) {
    CAPTURE(name(d));
    const Tensor x = gpu_test::sample({2, 3, 7, 6}, d);
    auto [yc, ic] = max_pool2d_with_indices(x, {2, 3}, {1, 2}, {1, 1}, {1, 1}, true);
    auto [yg, ig] = max_pool2d_with_indices(x.to(kCuda), {2, 3}, {1, 2}, {1, 1}, {1, 1}, true);
    CHECK(gpu_test::same_values(yg, yc));
    CHECK(gpu_test::same_values(ig, ic));
  }
  Tensor x = rand({1, 1, 4, 4});
  x.view({-1}).select(0, 5).fill_(std::nan(""));
  auto [yc, ic] = max_pool2d_with_indices(x, {2, 2});
  auto [yg, ig] = max_pool2d_with_indices(x.to(kCuda), {2, 2});
  CHECK(gpu_test::close_values(yg, yc, 0) == "");
  CHECK(gpu_test::same_values(ig, ic));
}

TEST_CASE("cuda max_pool2d_with_indices: a window with no input element gives -inf and index -1, as the CPU") {
  ANATOMY_REQUIRE_GPU();
  // Padding 1 with dilation 2 over a row of width 1: the first window's taps are columns -1 and 1.
  const Tensor x = randn({1, 3, 1});
  auto [yc, ic] = max_pool2d_with_indices(x, {1, 2}, {2, 1}, {0, 1}, {1, 2}, false);
  auto [yg, ig] = max_pool2d_with_indices(x.to(kCuda), {1, 2}, {2, 1}, {0, 1}, {1, 2}, false);
  CHECK(gpu_test::same_values(ig, ic));
  CHECK(gpu_test::close_values(yg, yc, 0) == "");
  CHECK(gpu_test::values_of(ic.view({-1})).front() == -1);
  // The backward passes the empty windows over: no error, and the CPU's gradient.
  const Tensor g = randn(yc.sizes());
  const Tensor dc = max_pool2d_with_indices_backward(g, x, {1, 2}, {2, 1}, {0, 1}, {1, 2}, false, ic);
  const Tensor dg =
      max_pool2d_with_indices_backward(g.to(kCuda), x.to(kCuda), {1, 2}, {2, 1}, {0, 1}, {1, 2}, false, ig);
  CHECK(gpu_test::close_values(dg, dc, 1e-6) == "");
  CHECK(gpu_test::pending_index_error().empty());
}

TEST_CASE("cuda max_pool2d_with_indices_backward: an index outside the plane raises at the next wait") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = rand({1, 2, 4, 4}, TensorOptions().device(kCuda));
  auto [y, i] = max_pool2d_with_indices(x, {2, 2});
  const Tensor bad = i.clone();
  bad.view({-1}).select(0, 1).fill_(99);
  (void)max_pool2d_with_indices_backward(ones_like(y), x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, bad);
  CHECK(gpu_test::pending_index_error().find("max_pool2d_with_indices_backward") != std::string::npos);
}

TEST_CASE("cuda pooling and upsampling do not wait for the device") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x =
      rand({2, 8, 9, 8}, TensorOptions().device(kCuda)).contiguous(MemoryFormat::ChannelsLast).requires_grad_();
  gpu_test::SyncDebugScope scope(cuda::SyncDebugMode::Error);
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    const Tensor y = c.op(x);
    CHECK_NOTHROW(y.backward(ones_like(y)));
  }
}

TEST_CASE("cuda pooling backward: operands on different devices are a DeviceError") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = rand({1, 2, 4, 4});
  auto [y, i] = max_pool2d_with_indices(x, {2, 2});
  CHECK_THROWS_AS(max_pool2d_with_indices_backward(ones_like(y).to(kCuda), x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, i),
                  DeviceError);
  CHECK_THROWS_AS(avg_pool2d_backward(ones_like(y).to(kCuda), x, {2, 2}, {2, 2}, {0, 0}, false, true, std::nullopt),
                  DeviceError);
  CHECK_THROWS_AS(_adaptive_avg_pool2d_backward(ones_like(y), x.to(kCuda)), DeviceError);
}

// The backward gathers where few windows can hold an input element (3x3 stride 2, dilated, ceil
// mode, 1x1) and scatters where many can (a dilation of 5 at stride 1 spans 11 outputs a row):
// both against the CPU's, with gradients that are small integers, so every sum is exact and
// the two orders of addition agree to the bit; fp32 and bf16, NCHW and channels_last.
TEST_CASE("cuda max_pool2d backward: the gather and the scatter match the CPU exactly") {
  ANATOMY_REQUIRE_GPU();
  struct Pool {
    std::vector<int64_t> kernel, stride, pad, dilation;
    bool ceil_mode;
  };
  const std::vector<Pool> pools = {{{3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
                                   {{2, 3}, {2, 1}, {1, 1}, {2, 2}, true},
                                   {{1, 1}, {1, 1}, {0, 0}, {1, 1}, false},
                                   {{3, 2}, {1, 1}, {1, 0}, {5, 1}, false},
                                   {{4, 4}, {1, 3}, {2, 1}, {1, 2}, true}};
  // 5 channels take the one-element kernels; 16 fill 16-byte words in NHWC (max_pool_nhwc.cu).
  for (DType d : {DType::Float32, DType::BFloat16}) {
    for (bool channels_last : {false, true}) {
      for (int64_t channels : {5, 16}) {
        for (const Pool& p : pools) {
          CAPTURE(name(d));
          CAPTURE(channels_last);
          CAPTURE(channels);
          CAPTURE(p.kernel[0]);
          CAPTURE(p.dilation[0]);
          Tensor x = gpu_test::sample({2, channels, 13, 11}, d);
          if (channels_last) x = x.contiguous(MemoryFormat::ChannelsLast);
          auto [y, i] = max_pool2d_with_indices(x, p.kernel, p.stride, p.pad, p.dilation, p.ceil_mode);
          const Tensor g = randint(-8, 9, y.sizes()).to(d);
          const Tensor want =
              max_pool2d_with_indices_backward(g, x, p.kernel, p.stride, p.pad, p.dilation, p.ceil_mode, i);
          const Tensor got = max_pool2d_with_indices_backward(g.to(kCuda), x.to(kCuda), p.kernel, p.stride, p.pad,
                                                              p.dilation, p.ceil_mode, i.to(kCuda));
          CHECK(gpu_test::same_values(got, want));
          CHECK(got.is_contiguous(channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous));
        }
      }
    }
  }
  // An empty batch and a plane of one pixel.
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{0, 3, 4, 4}, std::vector<int64_t>{1, 2, 1, 1}}) {
    const Tensor x = randn(sizes);
    auto [y, i] = max_pool2d_with_indices(x, {1, 1});
    const Tensor want = max_pool2d_with_indices_backward(ones_like(y), x, {1, 1}, {1, 1}, {0, 0}, {1, 1}, false, i);
    const Tensor got = max_pool2d_with_indices_backward(ones_like(y).to(kCuda), x.to(kCuda), {1, 1}, {1, 1}, {0, 0},
                                                        {1, 1}, false, i.to(kCuda));
    CHECK(gpu_test::same_values(got, want));
  }
  CHECK(gpu_test::pending_index_error().empty());
}

// NHWC whose channels fill 16-byte words takes max_pool_nhwc.cu's kernels: every dtype the
// forward takes (words of 16 uint8 down to 2 int64/fp64), indices exactly; a dense NHWC view one
// element off a word boundary takes the one-element kernels; a bad index is reported from the
// word kernel too.
TEST_CASE("cuda max_pool2d in NHWC words: every dtype, a view off the word boundary, a bad index") {
  ANATOMY_REQUIRE_GPU();
  for (DType d :
       {DType::UInt8, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    const Tensor x = gpu_test::sample({3, 16, 9, 7}, d).contiguous(MemoryFormat::ChannelsLast);
    auto [yc, ic] = max_pool2d_with_indices(x, {3, 2}, {2, 1}, {1, 1}, {1, 2}, true);
    auto [yg, ig] = max_pool2d_with_indices(x.to(kCuda), {3, 2}, {2, 1}, {1, 1}, {1, 2}, true);
    CHECK(gpu_test::same_values(yg, yc));
    CHECK(gpu_test::same_values(ig, ic));
    CHECK(yg.is_contiguous(MemoryFormat::ChannelsLast));
  }
  // One element past a word: the same NHWC strides over storage that starts at element 1.
  const Tensor base = randint(-8, 9, {2 * 16 * 9 * 7 + 1}).to(DType::Float32);
  const Tensor x = base.narrow(0, 1, 2 * 16 * 9 * 7).view({2, 9, 7, 16}).permute({0, 3, 1, 2});
  REQUIRE(x.is_contiguous(MemoryFormat::ChannelsLast));
  const Tensor xg =
      gpu_test::to_cuda_same_layout(base).narrow(0, 1, 2 * 16 * 9 * 7).view({2, 9, 7, 16}).permute({0, 3, 1, 2});
  auto [yc, ic] = max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1});
  auto [yg, ig] = max_pool2d_with_indices(xg, {3, 3}, {2, 2}, {1, 1});
  CHECK(gpu_test::same_values(yg, yc));
  CHECK(gpu_test::same_values(ig, ic));
  const Tensor g = randint(-8, 9, yc.sizes()).to(DType::Float32);
  CHECK(gpu_test::same_values(
      max_pool2d_with_indices_backward(g.to(kCuda), xg, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, ig),
      max_pool2d_with_indices_backward(g, x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, ic)));
  CHECK(gpu_test::pending_index_error().empty());
  // A bad index read by the word kernel of the backward.
  const Tensor xw = rand({1, 8, 4, 4}, TensorOptions().device(kCuda)).contiguous(MemoryFormat::ChannelsLast);
  auto [yw, iw] = max_pool2d_with_indices(xw, {2, 2});
  const Tensor bad = iw.clone();
  bad.select(0, 0).select(0, 3).select(0, 0).select(0, 1).fill_(99);
  (void)max_pool2d_with_indices_backward(ones_like(yw), xw, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, bad);
  CHECK(gpu_test::pending_index_error().find("max_pool2d_with_indices_backward") != std::string::npos);
}
