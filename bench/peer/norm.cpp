// CUDA pairs of the row normalizations over the last dim of an 8192 x 8192 fp32 tensor:
// layer_norm with weight and bias against at::layer_norm, and rms_norm with weight against
// at::rms_norm, in the same run. Device time between CUDA events; bytes read plus written (the
// parameters, 64 KiB, are left out). Each row is skipped unless anatomy has its CUDA backend and
// both libraries see a GPU. And layer_norm's backward with weight and bias (all three gradients,
// from the forward's saved mean and rstd) against at::native_layer_norm_backward; the pair
// compares the input's gradient, bytes: the gradient and input read, the input's gradient
// written.
#include "peer.h"

namespace peer {
namespace {

const anatomy::Device kCuda(anatomy::DeviceType::CUDA);  // the current device
constexpr int64_t kSide = 8192;

struct NormCase : CaseDefaults {
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kBytes = 2 * kSide * kSide * 4;
  // Both compute the statistics in fp32, in different orders (torch: Welford).
  static constexpr Tolerance kTol{1e-5, 1e-4};
  anatomy::Tensor cpu = anatomy::randn({kSide, kSide});
  anatomy::Tensor w_cpu = anatomy::randn({kSide});
  anatomy::Tensor b_cpu = anatomy::randn({kSide});
  anatomy::Tensor a = cpu.to(kCuda), w = w_cpu.to(kCuda), b = b_cpu.to(kCuda);
  at::Tensor t = to_torch(cpu).to(at::kCUDA), tw = to_torch(w_cpu).to(at::kCUDA), tb = to_torch(b_cpu).to(at::kCUDA);
};

struct LayerNormCuda : NormCase {
  static constexpr const char* kName = "layer_norm_8192x8192_fp32_cuda";
  anatomy::Tensor run_anatomy() { return anatomy::layer_norm(a, {kSide}, w, b, 1e-5); }
  at::Tensor run_torch() { return at::layer_norm(t, {kSide}, tw, tb, 1e-5); }
};

struct RmsNormCuda : NormCase {
  static constexpr const char* kName = "rms_norm_8192x8192_fp32_cuda";
  anatomy::Tensor run_anatomy() { return anatomy::rms_norm(a, {kSide}, w, 1e-6); }
  at::Tensor run_torch() { return at::rms_norm(t, {kSide}, tw, 1e-6); }
};

struct LayerNormBackwardCuda : NormCase {
  static constexpr const char* kName = "layer_norm_backward_8192x8192_fp32_cuda";
  static constexpr int64_t kBytes = 3 * kSide * kSide * 4;
  anatomy::Tensor g_cpu = anatomy::randn({kSide, kSide});
  anatomy::Tensor g = g_cpu.to(kCuda);
  at::Tensor tg = to_torch(g_cpu).to(at::kCUDA);
  // The statistics from each library's own forward.
  std::tuple<anatomy::Tensor, anatomy::Tensor, anatomy::Tensor> fwd =
      anatomy::native_layer_norm(a, {kSide}, w, b, 1e-5);
  std::tuple<at::Tensor, at::Tensor, at::Tensor> tfwd = at::native_layer_norm(t, {kSide}, tw, tb, 1e-5);
  anatomy::Tensor run_anatomy() {
    return std::get<0>(anatomy::native_layer_norm_backward(g, a, {kSide}, std::get<1>(fwd), std::get<2>(fwd), w, b,
                                                           {true, true, true}));
  }
  at::Tensor run_torch() {
    return std::get<0>(at::native_layer_norm_backward(tg, t, {kSide}, std::get<1>(tfwd), std::get<2>(tfwd), tw, tb,
                                                      {true, true, true}));
  }
};

const int registered =
    (register_pair<LayerNormCuda>(), register_pair<RmsNormCuda>(), register_pair<LayerNormBackwardCuda>(), 0);

}  // namespace
}  // namespace peer
