// The floor under every CUDA op's host cost: a bare cudaLaunchKernel (<<<>>>) of an empty kernel
// and of an add-shaped kernel (three pointers and a count, the arguments of a tiny a + b), next
// to anatomy's tiny add itself (a 4-element fp32 add_out and add), and the other ops of the
// training step at its sizes (mm, linear, sum over dim 0, relu). Host time per call, with
// one device synchronize at the end of the timing loop (the launch queue cannot run ahead
// unseen). The target: anatomy's tiny add within 1.3x of the bare launch.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include "anatomy/anatomy.h"
#include "anatomy/backends/cuda/device.h"

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

}  // namespace

BENCHMARK(BM_AnatomyMmTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyLinearTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomySumDim0Tiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyReluTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BareLaunchEmpty)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BareLaunchAddShaped)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyAddOutTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnatomyAddTiny)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
