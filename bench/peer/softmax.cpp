// CUDA pairs of softmax along the last dim of an 8192 x 8192 tensor, fp32 and bf16 (bf16 computes
// in fp32 on both sides), against at::softmax in the same run; and its backward in fp32
// (_softmax_backward_data against at::_softmax_backward_data: reads the gradient and the output,
// writes the input's gradient). Device time between CUDA events;
// bytes read plus written. Each row is skipped unless anatomy has its CUDA backend and both
// libraries see a GPU.
#include "peer.h"

namespace peer {
namespace {

const anatomy::Device kCuda(anatomy::DeviceType::CUDA);  // the current device
constexpr int64_t kSide = 8192;

struct SoftmaxFp32Cuda : CaseDefaults {
  static constexpr const char* kName = "softmax_8192x8192_fp32_cuda";
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kBytes = 2 * kSide * kSide * 4;
  static constexpr Tolerance kTol{1e-7, 1e-4};
  anatomy::Tensor cpu = anatomy::randn({kSide, kSide});
  anatomy::Tensor a = cpu.to(kCuda);
  at::Tensor t = to_torch(cpu).to(at::kCUDA);
  anatomy::Tensor run_anatomy() { return anatomy::softmax(a, 1); }
  at::Tensor run_torch() { return at::softmax(t, 1); }
};

struct SoftmaxBf16Cuda : CaseDefaults {
  static constexpr const char* kName = "softmax_8192x8192_bf16_cuda";
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kBytes = 2 * kSide * kSide * 2;
  // Both round the same fp32 values to bf16; a value near a rounding tie may round either way.
  static constexpr Tolerance kTol{1e-6, 1e-2};
  anatomy::Tensor cpu = anatomy::randn({kSide, kSide});
  anatomy::Tensor a = cpu.to(kCuda).to(anatomy::DType::BFloat16);
  at::Tensor t = to_torch(cpu).to(at::kCUDA).to(at::kBFloat16);
  anatomy::Tensor run_anatomy() { return anatomy::softmax(a, 1); }
  at::Tensor run_torch() { return at::softmax(t, 1); }
};

struct SoftmaxBackwardFp32Cuda : CaseDefaults {
  static constexpr const char* kName = "softmax_backward_8192x8192_fp32_cuda";
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kBytes = 3 * kSide * kSide * 4;
  static constexpr Tolerance kTol{1e-7, 1e-4};
  anatomy::Tensor y_cpu = anatomy::softmax(anatomy::randn({kSide, kSide}), 1);
  anatomy::Tensor g_cpu = anatomy::randn({kSide, kSide});
  anatomy::Tensor y = y_cpu.to(kCuda), g = g_cpu.to(kCuda);
  at::Tensor ty = to_torch(y_cpu).to(at::kCUDA), tg = to_torch(g_cpu).to(at::kCUDA);
  anatomy::Tensor run_anatomy() { return anatomy::_softmax_backward_data(g, y, 1, anatomy::DType::Float32); }
  at::Tensor run_torch() { return at::_softmax_backward_data(tg, ty, 1, at::kFloat); }
};

const int registered =
    (register_pair<SoftmaxFp32Cuda>(), register_pair<SoftmaxBf16Cuda>(), register_pair<SoftmaxBackwardFp32Cuda>(), 0);

}  // namespace
}  // namespace peer
