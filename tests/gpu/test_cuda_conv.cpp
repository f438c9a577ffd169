// GPU tests of the cuDNN convolutions against the CPU in fp64: forward and the three gradients,
// plain and transposed, 1-, 2- and 3-d, strided, padded, dilated, grouped and depthwise,
// channels_last (which must stay channels_last), every floating dtype, TF32 on and off, the
// benchmark mode's cached choice, and output_padding at the stride (the composite's case).
#include <string>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

struct Case {
  std::vector<int64_t> x, w;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed;
  int64_t groups;
  bool channels_last;
};

std::string describe(const Case& c, DType t) {
  return fmt::format(
      "{} x [{}] w [{}] stride [{}] padding [{}] dilation [{}] output_padding [{}] transposed {} "
      "groups {} channels_last {}",
      name(t), fmt::join(c.x, ", "), fmt::join(c.w, ", "), fmt::join(c.stride, ", "), fmt::join(c.padding, ", "),
      fmt::join(c.dilation, ", "), fmt::join(c.output_padding, ", "), c.transposed, c.groups, c.channels_last);
}

// fp16/bf16 inputs are rounded first, so both sides see the same values; the CPU computes in fp64.
double tolerance(DType t) {
  switch (t) {
    case DType::Float16:
      return 1e-2;
    case DType::BFloat16:
      return 5e-2;
    case DType::Float32:
      return 2e-3;  // TF32 (10-bit mantissa) is on by default, as PyTorch's
    default:
      return 1e-10;
  }
}

void check_case(const Case& c, DType t) {
  const std::string what = describe(c, t);
  Tensor x = (rand(c.x) * 2 - 1).to(t), w = (rand(c.w) * 2 - 1).to(t);
  const int64_t out_channels = c.transposed ? c.w[1] * c.groups : c.w[0];
  const Tensor b = (rand({out_channels}) * 2 - 1).to(t);
  if (c.channels_last) x = x.contiguous(MemoryFormat::ChannelsLast);
  // The CPU in fp64 from the same (rounded) values.
  const Tensor x64 = x.to(DType::Float64).requires_grad_(), w64 = w.to(DType::Float64).requires_grad_(),
               b64 = b.to(DType::Float64).requires_grad_();
  const Tensor want =
      convolution(x64, w64, b64, c.stride, c.padding, c.dilation, c.transposed, c.output_padding, c.groups);
  const Tensor xg = gpu_test::to_cuda_same_layout(x).detach().requires_grad_(),
               wg = w.to(kCuda).detach().requires_grad_(), bg = b.to(kCuda).detach().requires_grad_();
  const Tensor got = convolution(xg, wg, bg, c.stride, c.padding, c.dilation, c.transposed, c.output_padding, c.groups);
  CHECK_MESSAGE(got.dtype() == t, what);
  if (c.channels_last) CHECK_MESSAGE(got.is_contiguous(MemoryFormat::ChannelsLast), what);
  const double tol = tolerance(t);
  std::string diff = gpu_test::close_values(got.cpu(), want.to(t), tol);
  CHECK_MESSAGE(diff.empty(), "forward ", what, ": ", diff);
  const Tensor seed = rand(want.sizes(), DType::Float64) * 2 - 1;
  want.backward(seed);
  got.backward(seed.to(t).to(kCuda));
  // The weight gradient sums N * output positions of products: looser for the half types.
  const double grad_tol = t == DType::Float64 ? tol : tol * 4;
  diff = gpu_test::close_values(xg.grad().cpu(), x64.grad().to(t), grad_tol);
  CHECK_MESSAGE(diff.empty(), "input gradient ", what, ": ", diff);
  diff = gpu_test::close_values(wg.grad().cpu(), w64.grad().to(t), grad_tol);
  CHECK_MESSAGE(diff.empty(), "weight gradient ", what, ": ", diff);
  diff = gpu_test::close_values(bg.grad().cpu(), b64.grad().to(t), grad_tol);
  CHECK_MESSAGE(diff.empty(), "bias gradient ", what, ": ", diff);
}

std::vector<Case> cases() {
  return {
      {{2, 3, 9, 8}, {8, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, 1, false},
      {{2, 3, 9, 8}, {8, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, 1, true},
      {{2, 8, 11, 10}, {16, 8, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, false, 1, true},
      {{2, 8, 11, 10}, {12, 4, 3, 3}, {1, 2}, {2, 0}, {2, 1}, {0, 0}, false, 2, false},
      {{2, 8, 10, 10}, {8, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, 8, true},                   // depthwise
      {{4, 16, 7, 7}, {32, 16, 1, 1}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, false, 1, true},                  // 1x1
      {{2, 3, 20}, {5, 3, 4}, {2}, {1}, {1}, {0}, false, 1, false},                                     // 1-d
      {{1, 2, 5, 6, 5}, {4, 2, 3, 3, 2}, {1, 1, 1}, {1, 1, 0}, {1, 1, 1}, {0, 0, 0}, false, 1, false},  // 3-d
      {{2, 6, 5, 4}, {6, 4, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, 1, false},
      {{2, 6, 5, 4}, {6, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 0}, true, 3, true},
      {{2, 3, 7}, {3, 2, 3}, {3}, {0}, {2}, {1}, true, 1, false},  // 1-d transposed
      // output_padding at the stride (allowed below the dilation): the composite serves.
      {{1, 2, 4, 4}, {2, 2, 3, 3}, {1, 1}, {0, 0}, {3, 3}, {1, 1}, true, 1, false},
  };
}

}  // namespace

TEST_CASE("cuda convolution: cuDNN matches the CPU's fp64 for every floating dtype, forward and backward") {
  ANATOMY_REQUIRE_GPU();
  for (DType t : gpu_test::kFloatingDtypes)
    for (const Case& c : cases()) check_case(c, t);
}

TEST_CASE("cuda convolution: fp32 without TF32 is close to fp64") {
  ANATOMY_REQUIRE_GPU();
  PrecisionSwitchGuard tf32(&allow_tf32_cudnn, &set_allow_tf32_cudnn, false);
  const Tensor x = randn({2, 16, 12, 12}), w = randn({32, 16, 3, 3});
  const Tensor want = conv2d(x.to(DType::Float64), w.to(DType::Float64), std::nullopt, {1}, {1});
  const Tensor got = conv2d(x.to(kCuda), w.to(kCuda), std::nullopt, {1}, {1});
  const std::string diff = gpu_test::close_values(got.cpu(), want.to(DType::Float32), 1e-5);
  CHECK_MESSAGE(diff.empty(), diff);
}

TEST_CASE("cuda convolution: the benchmark mode times once per shape and gives the same values") {
  ANATOMY_REQUIRE_GPU();
  PrecisionSwitchGuard bench(&cudnn_benchmark, &set_cudnn_benchmark, true);
  const Tensor x = randn({4, 8, 16, 16}, DType::Float32).to(DType::BFloat16).to(kCuda);
  const Tensor w = randn({16, 8, 3, 3}, DType::Float32).to(DType::BFloat16).to(kCuda);
  const Tensor a = conv2d(x, w, std::nullopt, {1}, {1});
  const Tensor b = conv2d(x, w, std::nullopt, {1}, {1});  // the cached choice
  CHECK(gpu_test::same_values(a.cpu(), b.cpu()));
  const Tensor want = conv2d(x.cpu().to(DType::Float64), w.cpu().to(DType::Float64), std::nullopt, {1}, {1});
  const std::string diff = gpu_test::close_values(a.cpu(), want.to(DType::BFloat16), 5e-2);
  CHECK_MESSAGE(diff.empty(), diff);
}

TEST_CASE("cuda convolution: a graph of the backward (double backward) matches the CPU's") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = randn({2, 3, 6, 6}, DType::Float64), w = randn({4, 3, 3, 3}, DType::Float64);
  auto grads = [](const Tensor& xi, const Tensor& wi) {
    const Tensor xr = xi.detach().requires_grad_(), wr = wi.detach().requires_grad_();
    const Tensor y = conv2d(xr, wr, std::nullopt, {2}, {1});
    const Tensor gx = autograd::grad({(y * y).sum()}, {xr}, {}, std::nullopt, true)[0];
    const Tensor gw2 = autograd::grad({(gx * gx).sum()}, {wr})[0];
    return gw2;
  };
  const Tensor want = grads(x, w), got = grads(x.to(kCuda), w.to(kCuda));
  const std::string diff = gpu_test::close_values(got.cpu(), want, 1e-9);
  CHECK_MESSAGE(diff.empty(), diff);
}

TEST_CASE("cuda convolution: mismatched devices are a DeviceError") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = randn({1, 2, 5, 5}).to(kCuda), w = randn({3, 2, 3, 3});
  CHECK_THROWS_AS(conv2d(x, w), DeviceError);
}
