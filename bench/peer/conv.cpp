// Pairs of conv2d against at::conv2d in the same run, on the convolution shapes of ResNet-50,
// with their targets:
//   - CUDA, batch 64, bf16, channels_last, forward and backward (input and weight gradients):
//     at least 0.95x torch's speed on each shape; both run cuDNN with its heuristic's choice
//     (cudnn.benchmark off in both), so the point is to lose nothing on the way to it. Device
//     time between CUDA events; the pair compares the input's gradient.
//   - CPU, batch 8, fp32, NCHW, forward: at least 0.9x torch's speed with the same thread count
//     (both call oneDNN; anatomy's through Debian's libdnnl, torch's through its bundled one).
// FLOPs: 2 N C_out H_out W_out C_in k k per pass (three passes on CUDA, one on the CPU).
#include "peer.h"

namespace peer {
namespace {

const anatomy::Device kCuda(anatomy::DeviceType::CUDA);

struct Shape {
  int64_t c_in, c_out, hw, k, stride;
};
// conv1 (7x7/2), the 3x3s of the four stages (the strided one of stage 2), and the 1x1
// expansions and reductions of stages 1, 3 and 4.
constexpr Shape kShapes[] = {
    {3, 64, 224, 7, 2},   {64, 64, 56, 3, 1},    {64, 256, 56, 1, 1}, {256, 64, 56, 1, 1},  {128, 128, 56, 3, 2},
    {256, 256, 14, 3, 1}, {1024, 256, 14, 1, 1}, {512, 512, 7, 3, 1}, {512, 2048, 7, 1, 1},
};
constexpr const char* kCudaNames[] = {
    "conv2d_fwd_bwd_r50_conv1_7x7s2_3to64_224_bf16_cl_cuda", "conv2d_fwd_bwd_r50_3x3_64_56_bf16_cl_cuda",
    "conv2d_fwd_bwd_r50_1x1_64to256_56_bf16_cl_cuda",        "conv2d_fwd_bwd_r50_1x1_256to64_56_bf16_cl_cuda",
    "conv2d_fwd_bwd_r50_3x3s2_128_56_bf16_cl_cuda",          "conv2d_fwd_bwd_r50_3x3_256_14_bf16_cl_cuda",
    "conv2d_fwd_bwd_r50_1x1_1024to256_14_bf16_cl_cuda",      "conv2d_fwd_bwd_r50_3x3_512_7_bf16_cl_cuda",
    "conv2d_fwd_bwd_r50_1x1_512to2048_7_bf16_cl_cuda",
};
constexpr const char* kCpuNames[] = {
    "conv2d_r50_conv1_7x7s2_3to64_224_b8_fp32_cpu", "conv2d_r50_3x3_64_56_b8_fp32_cpu",
    "conv2d_r50_1x1_64to256_56_b8_fp32_cpu",        "conv2d_r50_1x1_256to64_56_b8_fp32_cpu",
    "conv2d_r50_3x3s2_128_56_b8_fp32_cpu",          "conv2d_r50_3x3_256_14_b8_fp32_cpu",
    "conv2d_r50_1x1_1024to256_14_b8_fp32_cpu",      "conv2d_r50_3x3_512_7_b8_fp32_cpu",
    "conv2d_r50_1x1_512to2048_7_b8_fp32_cpu",
};

constexpr double conv_flops(const Shape& s, int64_t batch) {
  const int64_t out = (s.hw + 2 * (s.k / 2) - s.k) / s.stride + 1;
  return 2.0 * static_cast<double>(batch * s.c_out * out * out * s.c_in * s.k * s.k);
}

template <int I>
struct ConvCuda : CaseDefaults {
  static constexpr Shape kShape = kShapes[I];
  static constexpr int64_t kBatch = 64;
  static constexpr const char* kName = kCudaNames[I];
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr double kFlops = 3 * conv_flops(kShape, kBatch);
  // bf16 results of sums over up to 9 * 1024 products, by possibly different cuDNN algorithms.
  static constexpr Tolerance kTol{0.25, 0.05};
  anatomy::Tensor x_cpu = anatomy::randn({kBatch, kShape.c_in, kShape.hw, kShape.hw});
  anatomy::Tensor w_cpu = anatomy::randn({kShape.c_out, kShape.c_in, kShape.k, kShape.k}) * 0.05;
  anatomy::Tensor x =
      x_cpu.to(kCuda).to(anatomy::DType::BFloat16).contiguous(anatomy::MemoryFormat::ChannelsLast).requires_grad_();
  anatomy::Tensor w =
      w_cpu.to(kCuda).to(anatomy::DType::BFloat16).contiguous(anatomy::MemoryFormat::ChannelsLast).requires_grad_();
  at::Tensor tx =
      to_torch(x_cpu).to(at::kCUDA).to(at::kBFloat16).contiguous(at::MemoryFormat::ChannelsLast).requires_grad_();
  at::Tensor tw =
      to_torch(w_cpu).to(at::kCUDA).to(at::kBFloat16).contiguous(at::MemoryFormat::ChannelsLast).requires_grad_();
  anatomy::Tensor gy =
      anatomy::ones_like(anatomy::conv2d(x.detach(), w.detach(), std::nullopt, {kShape.stride}, {kShape.k / 2}));
  at::Tensor tgy = at::ones_like(at::conv2d(tx.detach(), tw.detach(), {}, {kShape.stride}, {kShape.k / 2}));

  anatomy::Tensor run_anatomy() {
    x.set_grad({});
    w.set_grad({});
    anatomy::conv2d(x, w, std::nullopt, {kShape.stride}, {kShape.k / 2}).backward(gy);
    return x.grad();
  }
  at::Tensor run_torch() {
    tx.mutable_grad().reset();
    tw.mutable_grad().reset();
    at::conv2d(tx, tw, {}, {kShape.stride}, {kShape.k / 2}).backward(tgy);
    return tx.grad();
  }
};

template <int I>
struct ConvCpu : CaseDefaults {
  static constexpr Shape kShape = kShapes[I];
  static constexpr int64_t kBatch = 8;
  static constexpr const char* kName = kCpuNames[I];
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr double kFlops = conv_flops(kShape, kBatch);
  static constexpr Tolerance kTol{1e-3, 1e-4};
  anatomy::Tensor x = anatomy::randn({kBatch, kShape.c_in, kShape.hw, kShape.hw});
  anatomy::Tensor w = anatomy::randn({kShape.c_out, kShape.c_in, kShape.k, kShape.k}) * 0.05;
  at::Tensor tx = to_torch(x), tw = to_torch(w);
  anatomy::Tensor run_anatomy() { return anatomy::conv2d(x, w, std::nullopt, {kShape.stride}, {kShape.k / 2}); }
  at::Tensor run_torch() { return at::conv2d(tx, tw, {}, {kShape.stride}, {kShape.k / 2}); }
};

template <int... I>
int register_all(std::integer_sequence<int, I...>) {
  (register_pair<ConvCuda<I>>(), ...);
  (register_pair<ConvCpu<I>>(), ...);
  return 0;
}

const int registered = register_all(std::make_integer_sequence<int, 9>{});

}  // namespace
}  // namespace peer
