// The multi-tensor Adam kernel. A launch carries a table of up to kTensors tensors (their
// pointers and sizes) and which chunk of which tensor each of up to kBlocks blocks updates
// (multi_tensor.h; about 3 KB of parameters): a step over 100 parameters is a few launches
// instead of several kernels per parameter. Each thread updates elements of its block's chunk,
// in fp32 (fp64 for fp64), with the arithmetic of the single-tensor step (optim/adam.cpp), and
// writes the parameter and both moments back in their dtype. With the counts on the device
// (_fused_adam_capturable_) a launch first advances them all, and each block forms its tensor's
// bias corrections from its count, in fp64 as the single-tensor capturable step does.
#include <algorithm>
#include <cmath>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"
#include "anatomy/backends/cuda/optim/launch.h"
#include "anatomy/backends/cuda/optim/multi_tensor.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

constexpr int kTensors = 32;
constexpr int kBlocks = 320;
constexpr int64_t kChunk = 65536;  // elements a block updates
constexpr int kThreads = 512;

struct TensorTable {
  void* param[kTensors];
  const void* grad[kTensors];
  void* exp_avg[kTensors];
  void* exp_avg_sq[kTensors];
  int64_t numel[kTensors];
  const double* step[kTensors];  // null: the launch's bias corrections
  BlockMap<kTensors, kBlocks> map;
};
static_assert(sizeof(TensorTable) + 128 < 4096, "a kernel's parameters are limited to 4 KB");

// The factors the single-tensor step forms in double on the host (1 - beta, 1 - lr * wd), formed
// the same way: 1 - 0.999f in fp32 is 1.3e-5 away from 0.001f, enough to move a parameter by
// a few 1e-7 over a few steps.
template <typename A>
struct Hyper {
  A beta1, one_minus_beta1, beta2, one_minus_beta2, weight_decay, decay, eps, step_size, bias_correction2_sqrt;
  double lr, log_beta1, log_beta2;  // for the corrections of a count on the device
  bool decoupled;
};

constexpr int kSteps = 256;
struct StepTable {
  double* step[kSteps];
  int count;
};

__global__ void advance_steps_kernel(StepTable table) {
  if (static_cast<int>(threadIdx.x) < table.count) *table.step[threadIdx.x] += 1.0;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) fused_adam_kernel(TensorTable table, Hyper<opmath_t<T>> h) {
  using A = opmath_t<T>;
  const int i = table.map.tensor_of_block[blockIdx.x];
  const int64_t begin = static_cast<int64_t>(table.map.chunk_of_block[blockIdx.x]) * kChunk;
  const int64_t end = min(begin + kChunk, table.numel[i]);
  T* p = static_cast<T*>(table.param[i]);
  const T* g = static_cast<const T*>(table.grad[i]);
  T* m = static_cast<T*>(table.exp_avg[i]);
  T* v = static_cast<T*>(table.exp_avg_sq[i]);
  A step_size = h.step_size, bias_correction2_sqrt = h.bias_correction2_sqrt;
  // 1 - beta^t as 1 - exp(t log beta), as the operators form it.
  if (const double* count = table.step[i]) {
    const double t = *count;
    step_size = static_cast<A>(h.lr / (1.0 - exp(t * h.log_beta1)));
    bias_correction2_sqrt = static_cast<A>(sqrt(1.0 - exp(t * h.log_beta2)));
  }
  for (int64_t e = begin + threadIdx.x; e < end; e += kThreads) {
    A param = static_cast<A>(p[e]), grad = static_cast<A>(g[e]);
    if (h.weight_decay != A(0)) {
      if (h.decoupled) param = static_cast<A>(static_cast<T>(param * h.decay));
      else grad = static_cast<A>(static_cast<T>(grad + h.weight_decay * param));
    }
    const A avg = static_cast<A>(static_cast<T>(static_cast<A>(m[e]) * h.beta1)) + h.one_minus_beta1 * grad;
    const A avg_sq = static_cast<A>(static_cast<T>(static_cast<A>(v[e]) * h.beta2)) + h.one_minus_beta2 * grad * grad;
    const T avg_t = static_cast<T>(avg), avg_sq_t = static_cast<T>(avg_sq);
    // Rounded where the single-tensor step's operators round: sqrt, the division, the eps.
    const A root = static_cast<A>(static_cast<T>(sqrt(static_cast<A>(avg_sq_t))));
    const A denom =
        static_cast<A>(static_cast<T>(static_cast<A>(static_cast<T>(root / bias_correction2_sqrt)) + h.eps));
    p[e] = static_cast<T>(param - step_size * static_cast<A>(avg_t) / denom);
    m[e] = avg_t;
    v[e] = avg_sq_t;
  }
}

// Every entry's count advances by one before any block reads it: a block of the update that
// advanced its own tensor's count could not tell the other blocks of that tensor when it had.
void advance_steps(const std::vector<AdamTensors>& entries, cudaStream_t stream) {
  StepTable table{};
  auto launch = [&] {
    if (table.count > 0) advance_steps_kernel<<<1, kSteps, 0, stream>>>(table);
    ANATOMY_CUDA_LAUNCH_CHECK();
    table.count = 0;
  };
  for (const AdamTensors& t : entries) {
    if (t.step == nullptr) continue;
    table.step[table.count++] = t.step;
    if (table.count == kSteps) launch();
  }
  launch();
}

template <typename T>
void launch_for(const std::vector<AdamTensors>& entries, const AdamHyper& hyper, cudaStream_t stream) {
  using A = opmath_t<T>;
  const Hyper<A> h{static_cast<A>(hyper.beta1),
                   static_cast<A>(1 - hyper.beta1),
                   static_cast<A>(hyper.beta2),
                   static_cast<A>(1 - hyper.beta2),
                   static_cast<A>(hyper.weight_decay),
                   static_cast<A>(1 - hyper.lr * hyper.weight_decay),
                   static_cast<A>(hyper.eps),
                   static_cast<A>(hyper.lr / hyper.bias_correction1),
                   static_cast<A>(std::sqrt(hyper.bias_correction2)),
                   hyper.lr,
                   std::log(hyper.beta1),
                   std::log(hyper.beta2),
                   hyper.decoupled_weight_decay};
  advance_steps(entries, stream);
  TensorTable table{};
  std::vector<int64_t> numels;
  numels.reserve(entries.size());
  for (const AdamTensors& t : entries) numels.push_back(t.numel);
  plan_multi_tensor_launches(
      numels, kChunk, table.map,
      [&](int slot, size_t i) {
        const AdamTensors& t = entries[i];
        table.param[slot] = t.param;
        table.grad[slot] = t.grad;
        table.exp_avg[slot] = t.exp_avg;
        table.exp_avg_sq[slot] = t.exp_avg_sq;
        table.numel[slot] = t.numel;
        table.step[slot] = t.step;
      },
      [&](int blocks) {
        fused_adam_kernel<T><<<blocks, kThreads, 0, stream>>>(table, h);
        ANATOMY_CUDA_LAUNCH_CHECK();
      });
}

}  // namespace

void launch_fused_adam(DType dtype, const std::vector<AdamTensors>& entries, const AdamHyper& h, cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      launch_for<T>(entries, h, stream);
      return true;
    }
    return false;
  });
  if (!launched)
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_fused_adam: not a floating dtype", __FILE__, __LINE__);
}

}  // namespace anatomy::cuda
