// CUDA pairs of the reductions: sum of a 64 MiB fp32 tensor (8192 x 8192) over all dims, the last
// dim and the first dim, the three paths of Note [CUDA reduction paths] (backends/cuda/reduce/launch.h),
// against at::sum in the same run. Device time between CUDA events; bytes are those read (the
// results are at most 32 KiB). Each row is skipped unless anatomy has its CUDA backend and both
// libraries see a GPU.
#include "peer.h"

namespace peer {
namespace {

const anatomy::Device kCuda(anatomy::DeviceType::CUDA);  // the current device
constexpr int64_t kSide = 8192;                          // 8192 x 8192 fp32 = 64 MiB

struct SumCase : CaseDefaults {
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kBytes = kSide * kSide * 4;
  // Both sides sum in fp32 in different orders: agreement to a few fp32 roundings of sqrt(N).
  static constexpr Tolerance kTol{1e-2, 1e-4};
  anatomy::Tensor cpu = anatomy::randn({kSide, kSide});
  anatomy::Tensor a = cpu.to(kCuda);
  at::Tensor t = to_torch(cpu).to(at::kCUDA);
};

struct SumAllCuda : SumCase {
  static constexpr const char* kName = "sum_all_8192x8192_cuda";
  anatomy::Tensor run_anatomy() { return anatomy::sum(a); }
  at::Tensor run_torch() { return at::sum(t); }
};

struct SumLastCuda : SumCase {
  static constexpr const char* kName = "sum_last_dim_8192x8192_cuda";
  anatomy::Tensor run_anatomy() { return anatomy::sum(a, {1}); }
  at::Tensor run_torch() { return at::sum(t, {1}); }
};

struct SumFirstCuda : SumCase {
  static constexpr const char* kName = "sum_first_dim_8192x8192_cuda";
  anatomy::Tensor run_anatomy() { return anatomy::sum(a, {0}); }
  at::Tensor run_torch() { return at::sum(t, {0}); }
};

const int registered = (register_pair<SumAllCuda>(), register_pair<SumLastCuda>(), register_pair<SumFirstCuda>(), 0);

}  // namespace
}  // namespace peer
