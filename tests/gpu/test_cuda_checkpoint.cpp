// GPU tests of activation checkpointing (autograd/checkpoint.h) on CUDA: a dropout on the device
// inside a checkpoint sees the same mask when backward recomputes it (the CUDA generator is
// rewound, then left where the caller's draws put it), and a checkpointed MLP gets the same
// gradients with a clearly lower peak of the CUDA caching allocator.
#include <cmath>
#include <vector>

#include "anatomy/cuda.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item<double>(); }

// Dropout between two products: the mask comes from the CUDA generator.
std::vector<Tensor> dropout_block(const Tensor& w, const std::vector<Tensor>& in) {
  return {dropout(in[0].mm(w), 0.5, /*train=*/true).relu().mm(w)};
}

}  // namespace

TEST_CASE("cuda checkpoint: a dropout on the device sees the same mask when backward recomputes it") {
  ANATOMY_REQUIRE_GPU();
  const auto opts = TensorOptions().dtype(DType::Float64).device(kCuda);
  Tensor w = randn({64, 64}, TensorOptions().dtype(DType::Float64)).to(kCuda).requires_grad_();
  Tensor x = randn({32, 64}, TensorOptions().dtype(DType::Float64)).to(kCuda).requires_grad_();
  auto fn = [&w](const std::vector<Tensor>& in) { return dropout_block(w, in); };
  Generator& gen = default_generator(DeviceType::CUDA);

  gen.manual_seed(21);
  Tensor plain = fn({x})[0];
  plain.sum().backward();
  const Tensor gw = w.grad(), gx = x.grad();
  w.set_grad(Tensor());
  x.set_grad(Tensor());

  gen.manual_seed(21);
  Tensor ckpt = autograd::checkpoint(fn, {x})[0];
  CHECK(max_abs_diff(plain, ckpt) == 0);
  // The caller draws on the device before backward: the recomputation must not see these
  // counters, and must not move the generator past them.
  const Tensor later = rand({1000}, opts);
  const uint64_t offset_before_backward = gen.offset();
  ckpt.sum().backward();
  CHECK(gen.offset() == offset_before_backward);
  CHECK(max_abs_diff(gw, w.grad()) < 1e-12);
  CHECK(max_abs_diff(gx, x.grad()) < 1e-12);
  // A dropout drawn after backward continues the caller's stream of numbers.
  gen.manual_seed(21);
  (void)fn({x});
  (void)rand({1000}, opts);
  CHECK(gen.offset() == offset_before_backward);
}

TEST_CASE("cuda checkpoint: an MLP gets the same gradients with a clearly lower peak of device memory") {
  ANATOMY_REQUIRE_GPU();
  constexpr int64_t kBatch = 4096, kWidth = 256;
  constexpr int kLayers = 8;
  std::vector<Tensor> weights;
  manual_seed(1234);
  for (int i = 0; i < kLayers; ++i) {
    weights.push_back(
        (randn({kWidth, kWidth}) * (1.0 / std::sqrt(static_cast<double>(kWidth)))).to(kCuda).requires_grad_());
  }
  const Tensor x = randn({kBatch, kWidth}).to(kCuda).requires_grad_();
  // Four activations saved per layer (tanh's and sigmoid's results, the products' operands).
  auto layer = [](const Tensor& h, const Tensor& w) {
    Tensor a = h.mm(w).tanh();
    Tensor s = a.sigmoid();
    return (a * s).sin() * s;
  };
  auto run = [&](bool checkpointed) {
    cuda::synchronize();
    cuda::reset_peak_memory_stats(0);
    const int64_t start = cuda::memory_stats(0).allocated_bytes[alloc::StatType::All].current;
    Tensor h = x;
    for (const Tensor& w : weights) {
      if (checkpointed) {
        h = autograd::checkpoint(
            [&w, &layer](const std::vector<Tensor>& in) { return std::vector<Tensor>{layer(in[0], w)}; }, {h})[0];
      } else {
        h = layer(h, w);
      }
    }
    Tensor loss = (h * h).mean();
    h = Tensor();
    loss.backward();
    std::vector<Tensor> grads;
    for (Tensor& w : weights) {
      grads.push_back(w.grad());
      w.set_grad(Tensor());
    }
    return std::pair{cuda::memory_stats(0).allocated_bytes[alloc::StatType::All].peak - start, grads};
  };
  const auto [plain_peak, plain_grads] = run(false);
  const auto [ckpt_peak, ckpt_grads] = run(true);
  for (size_t i = 0; i < plain_grads.size(); ++i) {
    const double scale = plain_grads[i].abs().max().item<double>();
    CHECK(max_abs_diff(plain_grads[i], ckpt_grads[i]) <= 1e-4 * scale + 1e-6);
  }
  const int64_t activation = kBatch * kWidth * 4;
  MESSAGE("device peak above start: " << plain_peak << " bytes without checkpoint, " << ckpt_peak << " with ("
                                      << activation << " bytes per activation)");
  CHECK(plain_peak > 25 * activation);
  CHECK(ckpt_peak < plain_peak * 6 / 10);
}
