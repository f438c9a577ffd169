// The floor under every CUDA op's host cost: a bare cudaLaunchKernel (<<<>>>) of an empty kernel
// and of an add-shaped kernel (three pointers and a count, the arguments of a tiny a + b), next
// to anatomy's tiny add itself (a 4-element fp32 add_out and add), and the other ops of the
// training step at its sizes (mm, linear, sum over dim 0, relu). Host time per call, with
// one device synchronize at the end of the timing loop (the launch queue cannot run ahead
// unseen). The target: anatomy's tiny add within 1.3x of the bare launch.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

namespace bench_cuda_launch {
void launch_empty();  // cuda_launch_kernels.cu: <<<1, 1>>> of an empty kernel
void launch_add_shaped(const float* a, const float* b, float* c, long long n);  // <<<1, 256>>>
}  // namespace bench_cuda_launch

namespace {

bool skip_without_gpu(benchmark::State& state) {
  if (anatomy::cuda::device_count() > 0) return false;
  state.SkipWithError("no CUDA device");
  return true;
}

template <typename F>
void host_time(benchmark::State& state, F&& launch) {
  cudaDeviceSynchronize();
  benchmark::IterationCount i = 0;
  for (auto _ : state) {
    launch();
    if (++i == state.max_iterations) cudaDeviceSynchronize();
  }
}

void BM_BareLaunchEmpty(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  host_time(state, [] { bench_cuda_launch::launch_empty(); });
}

void BM_BareLaunchAddShaped(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const anatomy::TensorOptions cuda = anatomy::TensorOptions().device(anatomy::Device(anatomy::DeviceType::CUDA));
  const anatomy::Tensor a = anatomy::ones({4}, cuda), b = anatomy::ones({4}, cuda), c = anatomy::empty({4}, cuda);
  auto* pa = static_cast<const float*>(a.data_ptr());
  auto* pb = static_cast<const float*>(b.data_ptr());
  auto* pc = static_cast<float*>(c.data_ptr());
  host_time(state, [&] { bench_cuda_launch::launch_add_shaped(pa, pb, pc, 4); });
}

void BM_AnatomyAddOutTiny(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const anatomy::TensorOptions cuda = anatomy::TensorOptions().device(anatomy::Device(anatomy::DeviceType::CUDA));
  const anatomy::Tensor a = anatomy::ones({4}, cuda), b = anatomy::ones({4}, cuda), c = anatomy::empty({4}, cuda);
  host_time(state, [&] { anatomy::add_out(c, a, b); });
}

void BM_AnatomyAddTiny(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const anatomy::TensorOptions cuda = anatomy::TensorOptions().device(anatomy::Device(anatomy::DeviceType::CUDA));
  const anatomy::Tensor a = anatomy::ones({4}, cuda), b = anatomy::ones({4}, cuda);
  host_time(state, [&] { benchmark::DoNotOptimize(anatomy::add(a, b).data_ptr()); });
}

// The other kernels of the training step at its sizes (16 x 16 weights, batch 8), host time
// per call: where the step's time goes beyond the launches.
anatomy::TensorOptions cuda_options() {
  return anatomy::TensorOptions().device(anatomy::Device(anatomy::DeviceType::CUDA));
}

void BM_AnatomyMmTiny(benchmark::State& state) {  // cublasGemmEx
  if (skip_without_gpu(state)) return;
  const anatomy::Tensor g = anatomy::ones({8, 16}, cuda_options()), w = anatomy::ones({16, 16}, cuda_options());
  host_time(state, [&] { benchmark::DoNotOptimize(anatomy::mm(g, w).data_ptr()); });
}

void BM_AnatomyLinearTiny(benchmark::State& state) {  // addmm through cuBLASLt's bias epilogue
  if (skip_without_gpu(state)) return;
  const anatomy::Tensor x = anatomy::ones({8, 16}, cuda_options()), w = anatomy::ones({16, 16}, cuda_options());
  const anatomy::Tensor b = anatomy::ones({16}, cuda_options());
  host_time(state, [&] { benchmark::DoNotOptimize(anatomy::linear(x, w, b).data_ptr()); });
}

void BM_AnatomySumDim0Tiny(benchmark::State& state) {  // a bias gradient
  if (skip_without_gpu(state)) return;
  const anatomy::Tensor g = anatomy::ones({8, 16}, cuda_options());
  host_time(state, [&] { benchmark::DoNotOptimize(anatomy::sum(g, {0}).data_ptr()); });
}

void BM_AnatomyReluTiny(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const anatomy::Tensor x = anatomy::ones({8, 16}, cuda_options());
  host_time(state, [&] { benchmark::DoNotOptimize(anatomy::relu(x).data_ptr()); });
}

void BM_AnatomyMulTiny(benchmark::State& state) {  // the loss's h * h, and its backward
  if (skip_without_gpu(state)) return;
  const anatomy::Tensor x = anatomy::ones({8, 16}, cuda_options());
  host_time(state, [&] { benchmark::DoNotOptimize(anatomy::mul(x, x).data_ptr()); });
}

// The training step of bench/peer's mlp10x16_fwd_bwd_cuda (10 linear(16, 16) layers with relu,
// batch 8, loss = sum of squares), and its parts: the forward without autograd, the forward
// recording the graph (what the graph costs above the kernels), and the whole step with backward.
struct CudaMlp {
  static constexpr int kLayers = 10, kWidth = 16, kBatch = 8;
  std::vector<anatomy::Tensor> w, b;
  anatomy::Tensor x;
  CudaMlp() {
    anatomy::manual_seed(0);
    for (int i = 0; i < kLayers; ++i) {
      w.push_back(
          (anatomy::randn({kWidth, kWidth}) * 0.25).to(anatomy::Device(anatomy::DeviceType::CUDA)).requires_grad_());
      b.push_back((anatomy::randn({kWidth}) * 0.25).to(anatomy::Device(anatomy::DeviceType::CUDA)).requires_grad_());
    }
    x = anatomy::randn({kBatch, kWidth}).to(anatomy::Device(anatomy::DeviceType::CUDA));
  }
  anatomy::Tensor loss() {
    anatomy::Tensor h = x;
    for (int i = 0; i < kLayers; ++i) {
      h = anatomy::linear(h, w[i], b[i]);
      if (i + 1 < kLayers) h = anatomy::relu(h);
    }
    return (h * h).sum();
  }
};

void BM_AnatomyMlpForwardNoGrad(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  CudaMlp mlp;
  anatomy::autograd::NoGradGuard no_grad;
  host_time(state, [&] { benchmark::DoNotOptimize(mlp.loss().data_ptr()); });
}

void BM_AnatomyMlpForward(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  CudaMlp mlp;
  host_time(state, [&] { benchmark::DoNotOptimize(mlp.loss().data_ptr()); });
}

void BM_AnatomyMlpStep(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  CudaMlp mlp;
  host_time(state, [&] {
    for (int i = 0; i < CudaMlp::kLayers; ++i) mlp.w[i].set_grad({}), mlp.b[i].set_grad({});
    mlp.loss().backward();
  });
}

}  // namespace

BENCHMARK(BM_AnatomyMlpForwardNoGrad)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyMlpForward)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyMlpStep)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyMulTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyMmTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyLinearTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomySumDim0Tiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyReluTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BareLaunchEmpty)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BareLaunchAddShaped)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyAddOutTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyAddTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
