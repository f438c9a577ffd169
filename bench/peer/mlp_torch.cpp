// torch's side of a small training step: 10 Linear layers 16 wide with relu between them, batch 8,
// loss = sum of squares of the output, backward into every parameter's grad. Host time per
// iteration; on CUDA, one device synchronize at the end of the loop is counted in.
//
// The anatomy side of these rows (anatomy/mlp10x16_fwd_bwd_cpu and _cuda) is added with autograd;
// until then scripts/peer-report.py shows torch's figure alone, as the target to beat. A step this
// small is almost all per-op host overhead (about 60 operators forward and backward).
#include <torch/torch.h>

#include "peer.h"

namespace peer {
namespace {

constexpr int kLayers = 10, kWidth = 16, kBatch = 8;

torch::nn::Sequential make_mlp() {
  torch::nn::Sequential net;
  for (int i = 0; i < kLayers; ++i) {
    net->push_back(torch::nn::Linear(kWidth, kWidth));
    if (i + 1 < kLayers) net->push_back(torch::nn::ReLU());
  }
  return net;
}

void mlp_fwd_bwd(benchmark::State& state, bool cuda) {
  // torch alone runs this row, so only torch has to see a GPU.
  if (cuda && !torch::cuda::is_available()) {
    state.SkipWithError("torch sees no CUDA device (a CPU-only torch, or no driver)");
    return;
  }
  const at::Device device = cuda ? at::kCUDA : at::kCPU;
  torch::manual_seed(0);
  torch::nn::Sequential net = make_mlp();
  net->to(device);
  const at::Tensor x = torch::randn({kBatch, kWidth}, device);
  auto step = [&] {
    net->zero_grad();
    at::Tensor loss = net->forward(x).pow(2).sum();
    loss.backward();
  };
  step();  // first-call costs (autograd engine threads, CUDA kernels and handles) stay out of the timing
  if (cuda) torch::cuda::synchronize();
  benchmark::IterationCount i = 0;
  for (auto _ : state) {
    step();
    if (cuda && ++i == state.max_iterations) torch::cuda::synchronize();
  }
  if (!cuda) state.counters["num_threads"] = at::get_num_threads();
}

void mlp_cpu(benchmark::State& state) { mlp_fwd_bwd(state, false); }
void mlp_cuda(benchmark::State& state) { mlp_fwd_bwd(state, true); }

BENCHMARK(mlp_cpu)->Name("torch/mlp10x16_fwd_bwd_cpu")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(mlp_cuda)->Name("torch/mlp10x16_fwd_bwd_cuda")->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace peer
