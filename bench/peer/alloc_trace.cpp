// Fragmentation on a replayed allocation trace (issue target: peak reserved / peak allocated no
// worse than PyTorch's on the same trace): the synthetic transformer training trace of
// testing/alloc_trace.h replayed through anatomy's CUDA caching allocator (raw_alloc / raw_free
// on the default stream) and through torch's CUDACachingAllocator (raw_alloc / raw_delete, on its
// current stream, the default stream). Each side's counters come from one replay of its own
// after the timing, from an emptied cache with reset peaks: peak_reserved_MiB,
// peak_allocated_MiB and reserved_over_allocated (scripts/peer-report.py shows them). The time
// is one whole replay with a warm cache (the first replays, in the comparison, fill it). The
// result compared is a fixed one-element marker: a replay has no value.
#include "peer.h"

#if ANATOMY_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include "anatomy/backends/cuda/cuda_allocator.h"
#include "anatomy/testing/alloc_trace.h"

namespace peer {
namespace {

void set_fragmentation_counters(benchmark::State& state, double peak_reserved, double peak_allocated) {
  constexpr double kMiB = 1024.0 * 1024.0;
  state.counters["peak_reserved_MiB"] = peak_reserved / kMiB;
  state.counters["peak_allocated_MiB"] = peak_allocated / kMiB;
  state.counters["reserved_over_allocated"] = peak_allocated > 0 ? peak_reserved / peak_allocated : 0.0;
}

struct AllocTraceTransformerCuda : CaseDefaults {
  static constexpr const char* kName = "alloc_trace_transformer_cuda";
  static constexpr Timing kTiming = Timing::kHostSynced;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMillisecond;
  anatomy::testing::AllocTrace trace = anatomy::testing::transformer_trace();
  // A first CUDA tensor on each side initializes its allocator (torch's raw_alloc does not).
  anatomy::Tensor anatomy_init =
      anatomy::zeros({1}, anatomy::TensorOptions().device(anatomy::Device(anatomy::DeviceType::CUDA)));
  at::Tensor torch_init = at::zeros({1}, at::TensorOptions().device(at::kCUDA));
  anatomy::Tensor marker = anatomy::zeros({1});
  at::Tensor torch_marker = at::zeros({1});

  static void replay_torch(const anatomy::testing::AllocTrace& trace) {
    anatomy::testing::replay(
        trace, [](size_t n) { return c10::cuda::CUDACachingAllocator::raw_alloc(n); },
        [](void* p) { c10::cuda::CUDACachingAllocator::raw_delete(p); });
  }

  anatomy::Tensor run_anatomy() {
    anatomy::alloc::CachingAllocator& a = anatomy::cuda::caching_allocator();
    anatomy::testing::replay(
        trace, [&](size_t n) { return a.raw_alloc(n, 0); }, [&](void* p) { a.raw_free(p); });
    return marker;
  }
  at::Tensor run_torch() {
    replay_torch(trace);
    return torch_marker;
  }

  void report_anatomy(benchmark::State& state) {
    const anatomy::testing::FragmentationFigures f =
        anatomy::testing::replay_fragmentation(trace, anatomy::cuda::caching_allocator(), 0);
    set_fragmentation_counters(state, static_cast<double>(f.peak_reserved), static_cast<double>(f.peak_allocated));
  }
  void report_torch(benchmark::State& state) {
    const auto device = c10::cuda::current_device();
    c10::cuda::CUDACachingAllocator::emptyCache();
    c10::cuda::CUDACachingAllocator::resetPeakStats(device);
    replay_torch(trace);
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
    // Index 0 is StatType::AGGREGATE (all pools), whichever namespace this torch declares it in.
    set_fragmentation_counters(state, static_cast<double>(stats.reserved_bytes[0].peak),
                               static_cast<double>(stats.allocated_bytes[0].peak));
  }
};

const int registered = register_pair<AllocTraceTransformerCuda>();

}  // namespace
}  // namespace peer
#endif
