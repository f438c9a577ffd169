// CUDA pair of cross_entropy forward and backward on GPT-sized logits: (8192, 50257) bf16 with
// int64 targets, summed, backward into the logits' .grad, against at::cross_entropy_loss in the
// same run (the target: anatomy at least 2x torch). anatomy runs one fused kernel each
// way, reading the logits once forward and once backward and writing their gradient; torch runs
// log_softmax, nll_loss and their backward kernels. Device time between CUDA events; bytes are
// the fused path's (two reads and one write of the logits). Skipped unless anatomy has its CUDA
// backend and both libraries see a GPU.
#include "peer.h"

namespace peer {
namespace {

constexpr int64_t kRows = 8192, kVocab = 50257;

struct CrossEntropyBf16Cuda : CaseDefaults {
  static constexpr const char* kName = "cross_entropy_fwd_bwd_8192x50257_bf16_cuda";
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kBytes = 3 * kRows * kVocab * 2;
  // torch rounds log_softmax to bf16 before its backward reads it back (a few percent of a
  // probability); anatomy keeps the row's log-sum-exp in fp32.
  static constexpr Tolerance kTol{1e-5, 1e-1};
  anatomy::Tensor logits_cpu = anatomy::randn({kRows, kVocab});
  anatomy::Tensor target_cpu = anatomy::randint(0, kVocab, {kRows}, anatomy::DType::Int64);
  anatomy::Tensor x =
      logits_cpu.to(anatomy::Device(anatomy::DeviceType::CUDA)).to(anatomy::DType::BFloat16).requires_grad_();
  anatomy::Tensor target = target_cpu.to(anatomy::Device(anatomy::DeviceType::CUDA));
  at::Tensor tx = to_torch(logits_cpu).to(at::kCUDA).to(at::kBFloat16).requires_grad_();
  at::Tensor tt = to_torch(target_cpu).to(at::kCUDA);

  anatomy::Tensor run_anatomy() {
    x.set_grad({});
    anatomy::cross_entropy(x, target, std::nullopt, anatomy::LossReduction::Sum).backward();
    return x.grad();
  }
  at::Tensor run_torch() {
    tx.mutable_grad().reset();
    at::cross_entropy_loss(tx, tt, {}, at::Reduction::Sum).backward();
    return tx.grad();
  }
};

const int registered = register_pair<CrossEntropyBf16Cuda>();

}  // namespace
}  // namespace peer
