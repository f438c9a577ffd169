// MaxPool2d, AvgPool2d, AdaptiveAvgPool2d and Upsample: forward against the pooling and upsampling
// operators and plain engine ops, PyTorch's reprs, no state, and the arguments refused.
#include <doctest/doctest.h>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

using namespace anatomy;

TEST_CASE("nn: the pooling layers against the pooling operators and plain ops") {
  manual_seed(21);
  const Tensor x = randn({2, 3, 8, 6});
  nn::MaxPool2d pool(2);
  CHECK(pool.forward(x).equal(max_pool2d(x, {2, 2}, {2, 2})));
  // Non-overlapping 2x2 windows: the maximum of each window, from views.
  const Tensor windows = x.reshape({2, 3, 4, 2, 3, 2}).permute({0, 1, 2, 4, 3, 5}).reshape({2, 3, 4, 3, 4});
  CHECK(pool.forward(x).equal(windows.amax(std::vector<int64_t>{-1})));
  nn::MaxPool2d strided(3, {.stride = {2, 1}, .padding = 1});
  CHECK(strided.forward(x).equal(max_pool2d(x, {3, 3}, {2, 1}, {1, 1})));
  CHECK(strided.forward(x).sizes().vec() == std::vector<int64_t>{2, 3, 4, 6});

  nn::AvgPool2d avg(2);
  CHECK(avg.forward(x).allclose(windows.mean(std::vector<int64_t>{-1}), 1e-5, 1e-6));
  nn::AvgPool2d avg3(3, {.stride = 1, .padding = 1});
  CHECK(avg3.forward(x).equal(avg_pool2d(x, {3, 3}, {1, 1}, {1, 1})));

  nn::AdaptiveAvgPool2d gap(1);
  CHECK(gap.forward(x).allclose(x.mean(std::vector<int64_t>{2, 3}, true), 1e-5, 1e-6));
  nn::AdaptiveAvgPool2d half({4, 3});
  CHECK(half.forward(x).allclose(windows.mean(std::vector<int64_t>{-1}), 1e-5, 1e-6));
  CHECK(gap.forward(x.select(0, 0)).sizes().vec() == std::vector<int64_t>{3, 1, 1});  // unbatched
  CHECK(nn::Flatten().forward(gap.forward(x)).sizes().vec() == std::vector<int64_t>{2, 3});
}

TEST_CASE("nn: Upsample by size and by scale factor, nearest and bilinear") {
  manual_seed(22);
  const Tensor x = randn({1, 2, 3, 4});
  nn::Upsample twice({.scale_factor = 2.0});
  // Nearest by 2: each value repeated into a 2x2 block.
  CHECK(twice.forward(x).equal(x.repeat_interleave(2, 2).repeat_interleave(2, 3)));
  nn::Upsample sized({.size = nn::IntOrList{5, 7}, .mode = "bilinear", .align_corners = true});
  CHECK(sized.forward(x).equal(upsample_bilinear2d(x, {5, 7}, true)));
  // align_corners keeps the corners.
  const Tensor y = sized.forward(x);
  CHECK(y.select(2, 0).select(2, 0).allclose(x.select(2, 0).select(2, 0), 1e-6, 1e-6));
  CHECK(y.select(2, 4).select(2, 6).allclose(x.select(2, 2).select(2, 3), 1e-6, 1e-6));
  nn::Upsample lin({.scale_factor = nn::ScaleFactor{1.5, 2.0}, .mode = "bilinear"});
  CHECK(lin.forward(x).equal(upsample_bilinear2d(x, {4, 8}, false, 1.5, 2.0)));
}

TEST_CASE("nn: the pooling layers' and Upsample's reprs and bad arguments") {
  CHECK(nn::MaxPool2d(2).repr() == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  CHECK(nn::MaxPool2d({3, 3}, {.stride = 2, .padding = 1}).repr() ==
        "MaxPool2d(kernel_size=(3, 3), stride=2, padding=1, dilation=1, ceil_mode=False)");
  CHECK(nn::AvgPool2d(2).repr() == "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  CHECK(nn::AdaptiveAvgPool2d({1, 1}).repr() == "AdaptiveAvgPool2d(output_size=(1, 1))");
  CHECK(nn::Upsample({.scale_factor = 2.0}).repr() == "Upsample(scale_factor=2.0, mode='nearest')");
  CHECK(nn::Upsample({.size = nn::IntOrList{8, 8}, .mode = "bilinear"}).repr() ==
        "Upsample(size=(8, 8), mode='bilinear')");
  CHECK(nn::MaxPool2d(2).state_dict().empty());

  CHECK_THROWS_AS(nn::MaxPool2d(0), ValueError);
  CHECK_THROWS_AS(nn::MaxPool2d(2, {.stride = 0}), ValueError);
  CHECK_THROWS_AS(nn::MaxPool2d(2, {.padding = -1}), ValueError);
  CHECK_THROWS_AS(nn::MaxPool2d({2, 2, 2}), ValueError);
  CHECK_THROWS_AS(nn::AvgPool2d(2, {.divisor_override = 0}), ValueError);
  CHECK_THROWS_AS(nn::AdaptiveAvgPool2d(-1), ValueError);
  CHECK_THROWS_AS(nn::Upsample({}), ValueError);
  CHECK_THROWS_AS(nn::Upsample({.size = 4, .scale_factor = 2.0}), ValueError);
  CHECK_THROWS_AS(nn::Upsample({.scale_factor = 2.0, .mode = "cubic"}), ValueError);
  CHECK_THROWS_AS(nn::Upsample({.scale_factor = 2.0, .mode = "bicubic"}), NotImplementedError);
  CHECK_THROWS_AS(nn::Upsample({.scale_factor = 2.0, .align_corners = true}), ValueError);
  CHECK_THROWS_AS(nn::Upsample({.scale_factor = -2.0}), ValueError);
  CHECK_THROWS_AS(nn::Upsample({.scale_factor = 2.0}).forward(randn({2, 3, 4})), NotImplementedError);
}
