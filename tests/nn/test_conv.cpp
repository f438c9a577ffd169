// Conv1d, Conv2d and ConvTranspose2d: forward against the engine's convolution operators, PyTorch's
// reprs, state_dict keys, default initialisation bounds, and the arguments refused.
#include <doctest/doctest.h>

#include <cmath>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

using namespace anatomy;

namespace {

std::vector<std::string> keys(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [k, _] : m.state_dict()) out.push_back(k);
  return out;
}

double abs_max(const Tensor& t) { return t.abs().amax().item<double>(); }

}  // namespace

TEST_CASE("nn: Conv1d, Conv2d and ConvTranspose2d against the convolution operators") {
  manual_seed(11);
  nn::Conv2d conv(4, 6, 3, {.stride = {2, 1}, .padding = 1, .dilation = {1, 2}, .groups = 2});
  const Tensor x = randn({2, 4, 9, 10});
  CHECK(conv.forward(x).equal(conv2d(x, conv.weight, conv.bias, {2, 1}, {1, 1}, {1, 2}, 2)));
  CHECK(conv.forward(x.select(0, 1)).allclose(conv.forward(x).select(0, 1), 1e-5, 1e-6));

  nn::Conv2d same(4, 5, {3, 4}, {.padding = "same", .bias = false});
  CHECK(same.forward(x).equal(conv2d(x, same.weight, std::nullopt, {1}, "same")));
  CHECK(same.forward(x).size(2) == 9);
  CHECK(same.forward(x).size(3) == 10);
  nn::Conv2d valid(4, 5, 3, {.padding = "valid"});
  CHECK(valid.forward(x).equal(conv2d(x, valid.weight, valid.bias)));

  nn::Conv1d c1(3, 4, 5, {.stride = 2, .padding = 2});
  const Tensor s = randn({2, 3, 16});
  CHECK(c1.forward(s).equal(conv1d(s, c1.weight, c1.bias, {2}, {2})));
  CHECK(c1.forward(s).sizes().vec() == std::vector<int64_t>{2, 4, 8});

  nn::ConvTranspose2d up(4, 6, 3, {.stride = 2, .padding = 1, .output_padding = 1, .groups = 2});
  CHECK(up.weight.sizes().vec() == std::vector<int64_t>{4, 3, 3, 3});
  const Tensor y = up.forward(x);
  CHECK(y.equal(conv_transpose2d(x, up.weight, up.bias, {2, 2}, {1, 1}, {1, 1}, 2)));
  CHECK(y.sizes().vec() == std::vector<int64_t>{2, 6, 18, 20});
  // output_size picks the output_padding: 17 and 19 are the smallest sizes, 18 and 20 the largest.
  CHECK(up.forward(x, std::vector<int64_t>{17, 20})
            .equal(conv_transpose2d(x, up.weight, up.bias, {2, 2}, {1, 1}, {0, 1}, 2)));
  CHECK_THROWS_AS(up.forward(x, std::vector<int64_t>{16, 20}), ValueError);
  CHECK_THROWS_AS(up.forward(x, std::vector<int64_t>{2, 6, 17, 21}), ValueError);
}

TEST_CASE("nn: a convolution's gradient reaches its weight, bias and input") {
  manual_seed(12);
  nn::Conv2d conv(2, 3, 3, {.padding = 1});
  const Tensor x = randn({2, 2, 5, 5}).requires_grad_();
  conv.forward(x).square().sum().backward();
  REQUIRE(conv.weight.grad().defined());
  REQUIRE(conv.bias.grad().defined());
  REQUIRE(x.grad().defined());
  CHECK(conv.weight.grad().sizes() == conv.weight.sizes());
  CHECK(abs_max(conv.bias.grad()) > 0);
}

TEST_CASE("nn: the convolutions' reprs, state_dict keys and default initialisation") {
  CHECK(nn::Conv2d(3, 16, 3, {.padding = 1, .bias = false}).repr() ==
        "Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)");
  CHECK(nn::Conv2d(3, 16, {3, 5}, {.stride = 2, .dilation = 2, .groups = 1}).repr() ==
        "Conv2d(3, 16, kernel_size=(3, 5), stride=(2, 2), dilation=(2, 2))");
  CHECK(nn::Conv2d(4, 8, 3, {.padding = "same", .groups = 4}).repr() ==
        "Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=same, groups=4)");
  CHECK(nn::Conv1d(3, 16, 3).repr() == "Conv1d(3, 16, kernel_size=(3,), stride=(1,))");
  CHECK(nn::ConvTranspose2d(16, 8, 4, {.stride = 2, .padding = 1, .output_padding = 1}).repr() ==
        "ConvTranspose2d(16, 8, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))");

  nn::Conv2d conv(8, 16, 3, {.groups = 2});
  CHECK(keys(conv) == std::vector<std::string>{"weight", "bias"});
  CHECK(keys(nn::Conv2d(8, 16, 3, {.bias = false})) == std::vector<std::string>{"weight"});
  CHECK(conv.weight.sizes().vec() == std::vector<int64_t>{16, 4, 3, 3});
  CHECK(conv.weight.requires_grad());
  // kaiming_uniform_(a = sqrt(5)) over fan_in = 4 * 9 is U(-1/6, 1/6); the bias has the same bound.
  manual_seed(13);
  nn::Conv2d big(64, 256, 3);
  const double bound = 1.0 / std::sqrt(64.0 * 9);
  CHECK(abs_max(big.weight) <= bound);
  CHECK(abs_max(big.weight) > 0.95 * bound);
  CHECK(abs_max(big.bias) <= bound);
  CHECK(abs_max(big.bias) > 0.9 * bound);
  CHECK(big.weight.std().item<double>() == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.02));
  // Transposed: weight [in, out / groups, k, k], fan_in = out / groups * k * k, as PyTorch's.
  nn::ConvTranspose2d t(64, 128, 2);
  CHECK(t.weight.sizes().vec() == std::vector<int64_t>{64, 128, 2, 2});
  CHECK(abs_max(t.bias) <= 1.0 / std::sqrt(128.0 * 4));
}

TEST_CASE("nn: the convolutions refuse bad arguments by name") {
  CHECK_THROWS_AS(nn::Conv2d(3, 16, 3, {.groups = 2}), ValueError);  // in_channels % groups
  CHECK_THROWS_AS(nn::Conv2d(4, 6, 3, {.groups = 4}), ValueError);   // out_channels % groups
  CHECK_THROWS_AS(nn::Conv2d(4, 8, 3, {.groups = 0}), ValueError);
  CHECK_THROWS_AS(nn::Conv2d(-1, 8, 3), ValueError);
  CHECK_THROWS_AS(nn::Conv2d(3, 8, 0), ValueError);          // kernel_size
  CHECK_THROWS_AS(nn::Conv2d(3, 8, {3, 3, 3}), ValueError);  // three values for two dims
  CHECK_THROWS_AS(nn::Conv2d(3, 8, 3, {.stride = 0}), ValueError);
  CHECK_THROWS_AS(nn::Conv2d(3, 8, 3, {.padding = -1}), ValueError);
  CHECK_THROWS_AS(nn::Conv2d(3, 8, 3, {.dilation = 0}), ValueError);
  CHECK_THROWS_AS(nn::Conv2d(3, 8, 3, {.padding = "full"}), ValueError);
  CHECK_THROWS_AS(nn::Conv2d(3, 8, 3, {.stride = 2, .padding = "same"}), ValueError);
  CHECK_THROWS_AS(nn::Conv2d(3, 8, 3, {.padding_mode = "mirror"}), ValueError);
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    try {
      nn::Conv2d(3, 8, 3, {.padding_mode = mode});
      FAIL("padding_mode " << mode << " was accepted");
    } catch (const NotImplementedError& e) {
      CHECK(std::string(e.what()).find(mode) != std::string::npos);
    }
  }
  CHECK_THROWS_AS(nn::ConvTranspose2d(3, 8, 3, {.padding_mode = "reflect"}), ValueError);
  nn::Conv2d conv(3, 8, 3);
  CHECK_THROWS(conv.forward(randn({2, 4, 8, 8})));  // 4 channels for 3
}
