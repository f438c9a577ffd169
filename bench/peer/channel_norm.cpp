// CUDA pairs of batch_norm at ResNet-50's stage-1 shape: N=64, C=256, 56x56,
// bf16 activations in channels_last with float32 weight, bias and running statistics
// (PyTorch's mixed-precision batch norm), training. One row is the forward and the backward in
// one call (native_batch_norm, then native_batch_norm_backward with all three gradients from the
// forward's saved statistics) against at::native_batch_norm / at::native_batch_norm_backward;
// the pair compares the input's gradient. Another is the forward alone against at::batch_norm
// (which may take cuDNN). Bytes: the forward's x read and y written, the backward's x and dy
// read and dx written (the minimum traffic; the kernels read x once more for the statistics).
#include "peer.h"

namespace peer {
namespace {

const anatomy::Device kCuda(anatomy::DeviceType::CUDA);  // the current device
constexpr int64_t kN = 64, kC = 256, kSide = 56;
constexpr int64_t kElements = kN * kC * kSide * kSide;

struct BatchNormCase : CaseDefaults {
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  // Both round bf16 results of fp32 statistics summed in different orders.
  static constexpr Tolerance kTol{2e-2, 2e-2};
  anatomy::Tensor x_cpu = anatomy::randn({kN, kC, kSide, kSide});
  anatomy::Tensor g_cpu = anatomy::randn({kN, kC, kSide, kSide});
  anatomy::Tensor w_cpu = anatomy::randn({kC});
  anatomy::Tensor b_cpu = anatomy::randn({kC});
  anatomy::Tensor x = x_cpu.to(kCuda).to(anatomy::DType::BFloat16).contiguous(anatomy::MemoryFormat::ChannelsLast);
  anatomy::Tensor g = g_cpu.to(kCuda).to(anatomy::DType::BFloat16).contiguous(anatomy::MemoryFormat::ChannelsLast);
  anatomy::Tensor w = w_cpu.to(kCuda), b = b_cpu.to(kCuda);
  anatomy::Tensor rm = anatomy::zeros({kC}).to(kCuda), rv = anatomy::ones({kC}).to(kCuda);
  at::Tensor tx = to_torch(x_cpu).to(at::kCUDA).to(at::kBFloat16).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor tg = to_torch(g_cpu).to(at::kCUDA).to(at::kBFloat16).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor tw = to_torch(w_cpu).to(at::kCUDA), tb = to_torch(b_cpu).to(at::kCUDA);
  at::Tensor trm = at::zeros({kC}, at::TensorOptions().device(at::kCUDA));
  at::Tensor trv = at::ones({kC}, at::TensorOptions().device(at::kCUDA));
};

struct BatchNormForwardBackwardCuda : BatchNormCase {
  static constexpr const char* kName = "batch_norm_fwd_bwd_64x256x56x56_bf16_channels_last_cuda";
  static constexpr int64_t kBytes = 5 * kElements * 2;
  anatomy::Tensor run_anatomy() {
    auto [y, mean, invstd] = anatomy::native_batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5);
    return std::get<0>(
        anatomy::native_batch_norm_backward(g, x, w, rm, rv, mean, invstd, true, 1e-5, {true, true, true}));
  }
  at::Tensor run_torch() {
    auto [y, mean, invstd] = at::native_batch_norm(tx, tw, tb, trm, trv, true, 0.1, 1e-5);
    return std::get<0>(
        at::native_batch_norm_backward(tg, tx, tw, trm, trv, mean, invstd, true, 1e-5, {true, true, true}));
  }
};

struct BatchNormForwardCuda : BatchNormCase {
  static constexpr const char* kName = "batch_norm_fwd_64x256x56x56_bf16_channels_last_cuda";
  static constexpr int64_t kBytes = 2 * kElements * 2;
  anatomy::Tensor run_anatomy() { return anatomy::batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5); }
  at::Tensor run_torch() { return at::batch_norm(tx, tw, tb, trm, trv, true, 0.1, 1e-5, true); }
};

const int registered = (register_pair<BatchNormForwardBackwardCuda>(), register_pair<BatchNormForwardCuda>(), 0);

}  // namespace
}  // namespace peer
