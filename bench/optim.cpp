// The optimizers' step over many parameters: AdamW's single-tensor step (several operators per
// parameter) against foreach = true (one _fused_adam_ call: on CUDA a few launches for the whole
// group), on 100 parameters of 64x64 and of 256x256, on the CPU and, where a device is present,
// on CUDA (the target: the multi-tensor step at least 3x faster than the per-parameter
// loop); on CUDA also both with capturable = true (the counts on the device, as a step captured
// into a CUDA graph needs them: _fused_adam_capturable_ against about 25 operators per
// parameter). Host time per step with the device synchronized at the end of each step, so the
// time is the step's whole cost. clip_grad_norm_ over the same 100 gradients likewise: one
// _foreach_norm and one _foreach_mul_ against the loop it replaced (a norm and a mul_ per gradient,
// written out below).
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

// The gradients' joint 2-norm and the scale as clip_grad_norm_ formed them before the multi-tensor
// operators: a norm and a mul_ per gradient.
Tensor clip_per_gradient(const std::vector<Tensor>& grads, double max_norm) {
  std::vector<Tensor> norms;
  for (const Tensor& g : grads) norms.push_back(norm(g));
  const Tensor total = norm(stack(norms));
  const Tensor scale = clamp(total.add(1e-6).reciprocal().mul(max_norm), std::nullopt, Scalar(1.0));
  for (const Tensor& g : grads) g.mul_(scale);
  return total;
}

void clip_grad_norm(benchmark::State& state, Device device, bool foreach) {
  if (device.is_cuda() && !cuda::is_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const int64_t side = state.range(0);
  std::vector<Tensor> params, grads;
  for (int i = 0; i < 100; ++i) {
    params.push_back(zeros({side, side}, device).requires_grad_());
    params.back().set_grad(randn({side, side}, device));
    grads.push_back(params.back().grad());
  }
  autograd::NoGradGuard no_grad;
  const double max_norm = 1e9;  // above the norm: the scale is 1, and the gradients stay as they are
  for (auto _ : state) {
    benchmark::DoNotOptimize(foreach ? optim::clip_grad_norm_(params, max_norm) : clip_per_gradient(grads, max_norm));
    if (device.is_cuda()) cuda::synchronize();
  }
  state.counters["params"] = 100;
}

void BM_ClipGradNormCpu(benchmark::State& s) { clip_grad_norm(s, Device("cpu"), true); }
void BM_ClipPerGradientCpu(benchmark::State& s) { clip_grad_norm(s, Device("cpu"), false); }
void BM_ClipGradNormCuda(benchmark::State& s) { clip_grad_norm(s, Device("cuda:0"), true); }
void BM_ClipPerGradientCuda(benchmark::State& s) { clip_grad_norm(s, Device("cuda:0"), false); }

BENCHMARK(BM_ClipGradNormCpu)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ClipPerGradientCpu)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ClipGradNormCuda)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ClipPerGradientCuda)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
