// CUDA pair of max pooling as in a ResNet stem: 3x3, stride 2, padding 1 over (64, 64, 112, 112)
// bf16 in channels_last, forward and backward in one call (max_pool2d_with_indices, then its
// backward from the forward's indices) against at::max_pool2d_with_indices and
// at::max_pool2d_with_indices_backward, in the same run. Device time between CUDA events; bytes:
// the input read, the output and indices written, then grad_output and the indices read and the
// input's gradient written. The pair compares the input's gradient. Skipped unless anatomy has
// its CUDA backend and both libraries see a GPU.
#include "peer.h"

namespace peer {
namespace {

const anatomy::Device kCuda(anatomy::DeviceType::CUDA);  // the current device
constexpr int64_t kN = 64, kC = 64, kSide = 112, kOut = 56;
constexpr int64_t kIn = kN * kC * kSide * kSide, kOutElems = kN * kC * kOut * kOut;

struct MaxPoolForwardBackwardCuda : CaseDefaults {
  static constexpr const char* kName = "max_pool2d_3x3s2_fwd_bwd_64x64x112x112_bf16_channels_last_cuda";
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kBytes = (kIn + kOutElems) * 2 + kOutElems * 8 + kOutElems * (2 + 8) + kIn * 2;
  // Random inputs have no ties, so both pick the same maxima; a gradient sums at most a few bf16
  // values (overlapping windows), in fp32 on both sides, rounded once.
  static constexpr Tolerance kTol{1e-2, 1e-2};
  anatomy::Tensor x_cpu = anatomy::randn({kN, kC, kSide, kSide});
  anatomy::Tensor g_cpu = anatomy::randn({kN, kC, kOut, kOut});
  anatomy::Tensor x = x_cpu.to(kCuda).to(anatomy::DType::BFloat16).contiguous(anatomy::MemoryFormat::ChannelsLast);
  anatomy::Tensor g = g_cpu.to(kCuda).to(anatomy::DType::BFloat16).contiguous(anatomy::MemoryFormat::ChannelsLast);
  at::Tensor tx = to_torch(x_cpu).to(at::kCUDA).to(at::kBFloat16).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor tg = to_torch(g_cpu).to(at::kCUDA).to(at::kBFloat16).contiguous(at::MemoryFormat::ChannelsLast);

  anatomy::Tensor run_anatomy() {
    auto [y, i] = anatomy::max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1});
    return anatomy::max_pool2d_with_indices_backward(g, x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, i);
  }
  at::Tensor run_torch() {
    auto [y, i] = at::max_pool2d_with_indices(tx, {3, 3}, {2, 2}, {1, 1});
    return at::max_pool2d_with_indices_backward(tg, tx, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, i);
  }
};

const int registered = (register_pair<MaxPoolForwardBackwardCuda>(), 0);

}  // namespace
}  // namespace peer
