// BatchNorm1d, BatchNorm2d and GroupNorm: forward against plain engine ops in training and eval,
// the running statistics (momentum and the cumulative average), state_dict keys, reprs and the
// arguments refused.
#include <doctest/doctest.h>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

using namespace anatomy;

namespace {

std::vector<std::string> keys(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [k, _] : m.state_dict()) out.push_back(k);
  return out;
}

const std::vector<int64_t> kNHW{0, 2, 3};

// (x - mean) / sqrt(var + eps) * weight + bias per channel of [N, C, H, W].
Tensor normalized(const Tensor& x, const Tensor& mean, const Tensor& var, const nn::BatchNorm& bn) {
  auto c = [](const Tensor& t) { return t.reshape({1, -1, 1, 1}); };
  return (x - c(mean)) / c(var + bn.eps).sqrt() * c(bn.weight) + c(bn.bias);
}

}  // namespace

TEST_CASE("nn: BatchNorm2d normalizes by the batch in training and by the running stats in eval") {
  manual_seed(31);
  nn::BatchNorm2d bn(3);
  {
    autograd::NoGradGuard no_grad;
    bn.weight.normal_();
    bn.bias.normal_();
  }
  const Tensor x = randn({4, 3, 5, 5}) * 2 + 1;
  const Tensor y = bn.forward(x);
  const Tensor mean = x.mean(kNHW), var = x.var(kNHW, 0), unbiased = x.var(kNHW);
  CHECK(y.allclose(normalized(x, mean, var, bn), 1e-4, 1e-5));
  CHECK(bn.running_mean.allclose(mean * 0.1, 1e-5, 1e-6));
  CHECK(bn.running_var.allclose(ones({3}) * 0.9 + unbiased * 0.1, 1e-5, 1e-6));
  CHECK(bn.num_batches_tracked.item<int64_t>() == 1);
  CHECK(bn.num_batches_tracked.dtype() == DType::Int64);

  bn.eval();
  const Tensor rm = bn.running_mean.clone(), rv = bn.running_var.clone();
  CHECK(bn.forward(x).allclose(normalized(x, rm, rv, bn), 1e-4, 1e-5));
  CHECK(bn.running_mean.equal(rm));  // eval changes nothing
  CHECK(bn.num_batches_tracked.item<int64_t>() == 1);

  // The gradient reaches the input and the affine parameters.
  bn.train();
  const Tensor xg = x.clone().requires_grad_();
  (bn.forward(xg) * randn({4, 3, 5, 5})).sum().backward();
  CHECK(xg.grad().defined());
  CHECK(bn.weight.grad().defined());
}

TEST_CASE("nn: BatchNorm momentum = None is the cumulative average; untracked stats use the batch") {
  manual_seed(32);
  nn::BatchNorm1d bn(4, 1e-5, std::nullopt);
  const Tensor a = randn({8, 4}), b = randn({8, 4}) + 3;
  bn.forward(a);
  bn.forward(b);
  CHECK(bn.num_batches_tracked.item<int64_t>() == 2);
  const std::vector<int64_t> n{0};
  CHECK(bn.running_mean.allclose((a.mean(n) + b.mean(n)) / 2, 1e-5, 1e-6));
  CHECK(bn.running_var.allclose((a.var(n) + b.var(n)) / 2, 1e-5, 1e-6));
  CHECK(bn.repr() == "BatchNorm1d(4, eps=1e-05, momentum=None, affine=True, track_running_stats=True)");
  // [N, C, L] normalizes over N and L.
  const Tensor s = randn({3, 4, 5});
  bn.reset_running_stats();
  CHECK(bn.num_batches_tracked.item<int64_t>() == 0);
  const Tensor ys = bn.forward(s);
  CHECK(ys.mean(std::vector<int64_t>{0, 2}).abs().amax().item<double>() < 1e-5);

  nn::BatchNorm2d untracked(2, 1e-5, 0.1, false, false);
  CHECK(keys(untracked).empty());
  untracked.eval();
  const Tensor x = randn({3, 2, 4, 4});
  const Tensor mean = x.mean(kNHW, true), var = x.var(kNHW, 0, true);
  CHECK(untracked.forward(x).allclose((x - mean) / (var + 1e-5).sqrt(), 1e-4, 1e-5));
}

TEST_CASE("nn: GroupNorm against plain ops") {
  manual_seed(33);
  nn::GroupNorm gn(2, 6);
  {
    autograd::NoGradGuard no_grad;
    gn.weight.normal_();
    gn.bias.normal_();
  }
  const Tensor x = randn({2, 6, 3, 3});
  const Tensor g = x.reshape({2, 2, -1});
  const std::vector<int64_t> last{-1};
  const Tensor plain = ((g - g.mean(last, true)) / (g.var(last, 0, true) + 1e-5).sqrt()).reshape({2, 6, 3, 3});
  CHECK(gn.forward(x).allclose(plain * gn.weight.reshape({1, 6, 1, 1}) + gn.bias.reshape({1, 6, 1, 1}), 1e-4, 1e-5));
}

TEST_CASE("nn: the channel norms' state_dict keys, reprs and bad arguments") {
  nn::BatchNorm2d bn(16);
  CHECK(keys(bn) == std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
  CHECK(bn.weight.equal(ones({16})));
  CHECK(bn.bias.equal(zeros({16})));
  CHECK(bn.running_var.equal(ones({16})));
  CHECK(bn.num_batches_tracked.dim() == 0);
  CHECK(bn.repr() == "BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  CHECK(keys(nn::BatchNorm2d(4, 1e-5, 0.1, false)) ==
        std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  // to(dtype) leaves the int64 counter as it is.
  bn.to(DType::Float64);
  CHECK(bn.running_mean.dtype() == DType::Float64);
  CHECK(bn.num_batches_tracked.dtype() == DType::Int64);

  nn::GroupNorm gn(4, 16);
  CHECK(keys(gn) == std::vector<std::string>{"weight", "bias"});
  CHECK(gn.repr() == "GroupNorm(4, 16, eps=1e-05, affine=True)");

  CHECK_THROWS_AS(nn::BatchNorm2d(-1), ValueError);
  CHECK_THROWS_AS(nn::GroupNorm(3, 16), ValueError);
  CHECK_THROWS_AS(nn::GroupNorm(0, 16), ValueError);
  nn::BatchNorm2d two(2);
  CHECK_THROWS_AS(two.forward(randn({2, 2, 3})), ValueError);  // 3-D for BatchNorm2d
  CHECK_THROWS_AS(nn::BatchNorm1d(2).forward(randn({2, 2, 3, 3})), ValueError);
  // One value per channel cannot be normalized in training; nothing is counted.
  CHECK_THROWS_AS(two.forward(randn({1, 2, 1, 1})), ValueError);
  CHECK(two.num_batches_tracked.item<int64_t>() == 0);
  two.eval();
  CHECK(two.forward(randn({1, 2, 1, 1})).sizes().vec() == std::vector<int64_t>{1, 2, 1, 1});
}
