// GPU tests of the sync-debug mode (backends/cuda/runtime/sync_debug.h): item(), cpu() and
// synchronize() report themselves (Error: DeviceError before anything waits), and a whole
// training step -- forward, backward, optimizer -- runs without a single synchronization.
#include <vector>

#include "anatomy/cuda.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::SyncDebugScope;

TEST_CASE("cuda sync debug: item, cpu and synchronize raise in error mode, naming the op") {
  ANATOMY_REQUIRE_GPU();
  const Tensor t = ones({4}, TensorOptions().device(kCuda));
  SyncDebugScope scope(cuda::SyncDebugMode::Error);
  CHECK(cuda::sync_debug_mode() == cuda::SyncDebugMode::Error);
  CHECK_THROWS_WITH_AS(t.sum().item<double>(), doctest::Contains("aten::_local_scalar_dense"), DeviceError);
  CHECK_THROWS_WITH_AS(t.cpu(), doctest::Contains("synchronizing CUDA operation"), DeviceError);
  CHECK_THROWS_AS(cuda::synchronize(), DeviceError);
  cuda::set_sync_debug_mode(cuda::SyncDebugMode::Warn);
  CHECK(t.sum().item<double>() == 4.0);  // warn: reported on stderr, and it runs
}

TEST_CASE("cuda sync debug: a training step on the device never synchronizes") {
  ANATOMY_REQUIRE_GPU();
  const TensorOptions cuda = TensorOptions().device(kCuda);
  Tensor w = (randn({16, 16}) * 0.25).to(kCuda).requires_grad_();
  Tensor b = zeros({16}, cuda).requires_grad_();
  const Tensor x = randn({8, 16}).to(kCuda);
  optim::AdamW opt({w, b}, {.lr = 0.01});
  Tensor loss;
  {
    SyncDebugScope scope(cuda::SyncDebugMode::Error);
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      const Tensor h = relu(linear(x, w, b));
      loss = (h * h + 2).softmax(1, std::nullopt).log().mean();
      loss.backward();
      opt.step();
    }
  }
  CHECK(std::isfinite(loss.item<double>()));
}
