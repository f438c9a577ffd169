// The caching allocator's hot path on CUDA: a cached 1 MiB allocate + free pair (the target: at
// most 100 ns), anatomy's CachingAllocator::allocate and the DataPtr's free against torch's
// CUDACachingAllocator raw_alloc / raw_delete, host time per pair. Both sides' caches are warm
// (the first pair in the case's constructor and the comparison call), so no call reaches
// cudaMalloc. The result compared is a fixed one-element marker: the pair has no value. It is
// returned by reference, so the timed loop holds no tensor copy (two atomic reference-count
// updates, 10-20 ns on the GPU machines' hosts) on either side.
#include "peer.h"

#if ANATOMY_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>

#include "anatomy/backends/cuda/memory/cuda_allocator.h"

namespace peer {
namespace {

constexpr size_t kPairBytes = size_t{1} << 20;

struct AllocFree1MiBCuda : CaseDefaults {
  static constexpr const char* kName = "alloc_free_1mib_cuda";
  static constexpr Timing kTiming = Timing::kHostSynced;
  // A first CUDA tensor on each side initializes its allocator and warms its cache.
  anatomy::Tensor anatomy_init =
      anatomy::zeros({1}, anatomy::TensorOptions().device(anatomy::Device(anatomy::DeviceType::CUDA)));
  at::Tensor torch_init = at::zeros({1}, at::TensorOptions().device(at::kCUDA));
  anatomy::Tensor marker = anatomy::zeros({1});
  at::Tensor torch_marker = at::zeros({1});
  const anatomy::Tensor& run_anatomy() {
    anatomy::DataPtr p = anatomy::cuda::caching_allocator().allocate(kPairBytes);
    benchmark::DoNotOptimize(p.get());
    return marker;  // p's block goes back to the cache here
  }
  const at::Tensor& run_torch() {
    void* p = c10::cuda::CUDACachingAllocator::raw_alloc(kPairBytes);
    benchmark::DoNotOptimize(p);
    c10::cuda::CUDACachingAllocator::raw_delete(p);
    return torch_marker;
  }
};

const int registered = register_pair<AllocFree1MiBCuda>();

}  // namespace
}  // namespace peer
#endif
