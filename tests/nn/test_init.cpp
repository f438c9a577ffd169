// nn::init by statistics on large tensors: bounds, mean and std against PyTorch's formulas; gains
// and fans; repeatable with manual_seed; bad arguments.
#include <doctest/doctest.h>

#include <cmath>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

using namespace anatomy;
namespace init = anatomy::nn::init;

namespace {

double mean_of(const Tensor& t) { return t.to(DType::Float64).mean().item<double>(); }
double std_of(const Tensor& t) { return t.to(DType::Float64).std().item<double>(); }
double min_of(const Tensor& t) { return t.min().item<double>(); }
double max_of(const Tensor& t) { return t.max().item<double>(); }

// U(-bound, bound): inside the bounds, near them at both ends, std bound / sqrt(3).
void check_uniform(const Tensor& t, double bound) {
  CHECK(min_of(t) >= -bound);
  CHECK(max_of(t) <= bound);
  CHECK(min_of(t) < -0.99 * bound);
  CHECK(max_of(t) > 0.99 * bound);
  CHECK(std::abs(mean_of(t)) < 0.02 * bound);
  CHECK(std_of(t) == doctest::Approx(bound / std::sqrt(3.0)).epsilon(0.02));
}

void check_normal(const Tensor& t, double mean, double std) {
  CHECK(std::abs(mean_of(t) - mean) < 0.02 * std);
  CHECK(std_of(t) == doctest::Approx(std).epsilon(0.02));
}

}  // namespace

TEST_CASE("nn::init: calculate_gain and the fans are PyTorch's") {
  CHECK(init::calculate_gain("linear") == 1.0);
  CHECK(init::calculate_gain("conv2d") == 1.0);
  CHECK(init::calculate_gain("sigmoid") == 1.0);
  CHECK(init::calculate_gain("tanh") == doctest::Approx(5.0 / 3.0));
  CHECK(init::calculate_gain("relu") == doctest::Approx(std::sqrt(2.0)));
  CHECK(init::calculate_gain("leaky_relu") == doctest::Approx(std::sqrt(2.0 / (1 + 0.01 * 0.01))));
  CHECK(init::calculate_gain("leaky_relu", std::sqrt(5.0)) == doctest::Approx(std::sqrt(1.0 / 3.0)));
  CHECK(init::calculate_gain("selu") == 0.75);
  CHECK_THROWS_AS(init::calculate_gain("swish"), ValueError);
  CHECK(init::calculate_fan_in_and_fan_out(empty({8, 4})) == std::pair<int64_t, int64_t>{4, 8});
  CHECK(init::calculate_fan_in_and_fan_out(empty({16, 3, 5, 5})) == std::pair<int64_t, int64_t>{75, 400});
  CHECK_THROWS_AS(init::calculate_fan_in_and_fan_out(empty({8})), ValueError);
}

TEST_CASE("nn::init: the fills by statistics") {
  manual_seed(3);
  Tensor t = empty({400, 500});
  check_uniform(init::uniform_(t, -0.3, 0.3), 0.3);
  check_normal(init::normal_(t, 1.5, 0.2), 1.5, 0.2);
  CHECK(init::constant_(t, 2.5).eq(2.5).all().item<bool>());
  CHECK(init::zeros_(t).eq(0).all().item<bool>());
  CHECK(init::ones_(t).eq(1).all().item<bool>());
  // fan_in 500, fan_out 400.
  check_uniform(init::xavier_uniform_(t, 2.0), 2.0 * std::sqrt(6.0 / 900));
  check_normal(init::xavier_normal_(t), 0, std::sqrt(2.0 / 900));
  check_uniform(init::kaiming_uniform_(t, std::sqrt(5.0)), 1.0 / std::sqrt(500.0));
  check_uniform(init::kaiming_uniform_(t, 0, "fan_out", "relu"), std::sqrt(2.0) * std::sqrt(3.0 / 400));
  check_normal(init::kaiming_normal_(t, 0, "fan_in", "relu"), 0, std::sqrt(2.0 / 500));
  check_normal(init::kaiming_normal_(t, 0, "fan_out", "tanh"), 0, 5.0 / 3.0 / std::sqrt(400.0));
}

TEST_CASE("nn::init: trunc_normal_ stays in [a, b] with the truncated normal's moments") {
  manual_seed(4);
  Tensor t = empty({200000});
  // N(0, 1) truncated to [-1, 2]: mean (phi(-1) - phi(2)) / Z, Z = Phi(2) - Phi(-1).
  init::trunc_normal_(t, 0.0, 1.0, -1.0, 2.0);
  CHECK(min_of(t) >= -1.0);
  CHECK(max_of(t) <= 2.0);
  auto phi = [](double x) { return std::exp(-x * x / 2) / std::sqrt(2 * M_PI); };
  auto cdf = [](double x) { return (1 + std::erf(x / std::sqrt(2.0))) / 2; };
  const double z = cdf(2) - cdf(-1);
  const double mean = (phi(-1) - phi(2)) / z;
  const double var = 1 + (-1 * phi(-1) - 2 * phi(2)) / z - mean * mean;
  CHECK(mean_of(t) == doctest::Approx(mean).epsilon(0.02));
  CHECK(std_of(t) == doctest::Approx(std::sqrt(var)).epsilon(0.02));
  // The usual transformer use: std 0.02 cut at 2 std.
  init::trunc_normal_(t, 0.0, 0.02, -0.04, 0.04);
  CHECK(min_of(t) >= -0.04);
  CHECK(max_of(t) <= 0.04);
  CHECK(std_of(t) == doctest::Approx(0.02 * 0.8796).epsilon(0.02));  // the 2-sigma truncation's std factor
  CHECK_THROWS_AS(init::trunc_normal_(t, 0, 1, 1, -1), ValueError);
  CHECK_THROWS_AS(init::trunc_normal_(empty({3}, DType::Int64)), TypeError);
}

TEST_CASE("nn::init: repeatable with manual_seed, no history, and typed errors") {
  Tensor a = empty({64, 32});
  Tensor b = empty({64, 32});
  manual_seed(9);
  init::kaiming_normal_(a);
  manual_seed(9);
  init::kaiming_normal_(b);
  CHECK(a.equal(b));
  // A parameter stays a leaf: the fill is recorded nowhere.
  Tensor w = zeros({4, 4}).requires_grad_();
  init::xavier_uniform_(w);
  CHECK(w.is_leaf());
  CHECK(w.requires_grad());
  CHECK_THROWS_AS(init::kaiming_uniform_(a, 0, "fan_avg"), ValueError);
  CHECK_THROWS_AS(init::kaiming_uniform_(empty({5})), ValueError);
  CHECK_THROWS_AS(init::uniform_(Tensor()), ValueError);
  CHECK_THROWS_AS(init::normal_(a, 0, -1), ValueError);
  // An empty tensor has nothing to fill (PyTorch's no-op).
  CHECK(init::kaiming_uniform_(empty({4, 0})).numel() == 0);
}

TEST_CASE("nn: each layer's default initialisation by statistics") {
  manual_seed(5);
  nn::Linear lin(300, 400);
  check_uniform(lin.weight, 1.0 / std::sqrt(300.0));
  CHECK(max_of(lin.bias.abs()) <= 1.0 / std::sqrt(300.0));
  CHECK(max_of(lin.bias.abs()) > 0.9 / std::sqrt(300.0));
  nn::Embedding emb(500, 300, 7);
  check_normal(emb.weight, 0, 1);
  CHECK(emb.weight.select(0, 7).eq(0).all().item<bool>());
  nn::LayerNorm ln({6, 5});
  CHECK(ln.weight.equal(ones({6, 5})));
  CHECK(ln.bias.equal(zeros({6, 5})));
  CHECK_FALSE(nn::LayerNorm({5}, 1e-5, true, /*bias=*/false).bias.defined());
  CHECK(nn::LayerNorm({5}, 1e-5, /*elementwise_affine=*/false).parameters().empty());
  CHECK(nn::RMSNorm({7}).weight.equal(ones({7})));
  nn::MultiheadAttention mha(240, 4);
  check_uniform(mha.in_proj_weight, std::sqrt(6.0 / (240 + 720)));
  CHECK(mha.in_proj_bias.equal(zeros({720})));
  CHECK(mha.out_proj->bias.equal(zeros({240})));
  check_uniform(mha.out_proj->weight, 1.0 / std::sqrt(240.0));
}
