// The optimizers' step over many parameters: AdamW's single-tensor step (several operators per
// parameter) against foreach = true (one _fused_adam_ call: on CUDA a few launches for the whole
// group), on 100 parameters of 64x64 and of 256x256, on the CPU and, where a device is present,
// on CUDA (issue 25's target: the multi-tensor step at least 3x faster than the per-parameter
// loop); on CUDA also both with capturable = true (the counts on the device, as a step captured
// into a CUDA graph needs them: _fused_adam_capturable_ against about 25 operators per
// parameter). Host time per step with the device synchronized at the end of each step, so the
// time is the step's whole cost.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

namespace {

using namespace anatomy;

void adamw_step(benchmark::State& state, Device device, bool foreach, bool capturable = false) {
  if (device.is_cuda() && !cuda::is_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const int64_t side = state.range(0);
  std::vector<Tensor> params;
  for (int i = 0; i < 100; ++i) params.push_back(randn({side, side}, device).requires_grad_());
  for (const Tensor& p : params) p.set_grad(randn({side, side}, device));
  optim::AdamW opt(params, optim::AdamWOptions{.lr = 1e-4, .capturable = capturable, .foreach = foreach});
  opt.step();  // the state is made at the first step
  if (device.is_cuda()) cuda::synchronize();
  for (auto _ : state) {
    opt.step();
    if (device.is_cuda()) cuda::synchronize();
  }
  state.counters["params"] = 100;
}

void BM_AdamWStepCpu(benchmark::State& s) { adamw_step(s, Device("cpu"), false); }
void BM_AdamWForeachCpu(benchmark::State& s) { adamw_step(s, Device("cpu"), true); }
void BM_AdamWStepCuda(benchmark::State& s) { adamw_step(s, Device("cuda:0"), false); }
void BM_AdamWForeachCuda(benchmark::State& s) { adamw_step(s, Device("cuda:0"), true); }
void BM_AdamWCapturableStepCuda(benchmark::State& s) { adamw_step(s, Device("cuda:0"), false, true); }
void BM_AdamWCapturableForeachCuda(benchmark::State& s) { adamw_step(s, Device("cuda:0"), true, true); }

BENCHMARK(BM_AdamWStepCpu)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AdamWForeachCpu)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AdamWStepCuda)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AdamWForeachCuda)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AdamWCapturableStepCuda)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AdamWCapturableForeachCuda)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
