// Fragmentation on a replayed allocation trace (the target: peak reserved / peak allocated no
// worse than PyTorch's on the same trace), two traces, each replayed through anatomy's CUDA
// caching allocator (raw_alloc / raw_free on the default stream) and through torch's
// CUDACachingAllocator (raw_alloc / raw_delete, on its current stream, the default stream):
//
//   alloc_trace_transformer_cuda       the synthetic transformer training trace of
//                                      testing/alloc_trace.h, through the device's allocator;
//   alloc_trace_transformer_real_cuda  a trace recorded once per process from anatomy's own GPT-style
//                                      training on this GPU (testing/transformer_step.h: 12 layers,
//                                      hidden 768, 12 heads, vocab 8192, batch 8, fp32, eight AdamW
//                                      steps at sequence lengths from 256 to 512) through the
//                                      device allocator's memory history
//                                      (testing/alloc_trace_record.h), replayed through a fresh
//                                      CachingAllocator over its own CudaMemoryProvider (the
//                                      recording's cache is emptied first).
//
// Each side's counters come from one replay of its own after the timing, from an emptied cache
// with reset peaks: peak_reserved_MiB, peak_allocated_MiB and reserved_over_allocated
// (scripts/peer-report.py shows them). The real row's anatomy side also reports the trace
// (trace_allocations, trace_peak_live_MiB, history_events, closed_blocks: allocations the run
// left live, such as the cuBLAS workspace, freed at the trace's end) and the same replay on the
// simulated device (sim_peak_reserved_MiB, sim_peak_allocated_MiB, sim_reserved_over_allocated:
// the policy alone). With ANATOMY_ALLOC_TRACE_OUT set, the recorded trace is also written to
// that file (testing::write_trace). The time is one whole replay with a warm cache (the first
// replays, in the comparison, fill it). The result compared is a fixed one-element marker: a
// replay has no value.
#include "peer.h"

#if ANATOMY_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

#include "anatomy/alloc/simulated_provider.h"
#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/cuda.h"
#include "anatomy/testing/alloc_trace.h"
#include "anatomy/testing/alloc_trace_record.h"
#include "anatomy/testing/alloc_trace_replay.h"
#include "anatomy/testing/transformer_step.h"

namespace peer {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

void set_fragmentation_counters(benchmark::State& state, double peak_reserved, double peak_allocated) {
  state.counters["peak_reserved_MiB"] = peak_reserved / kMiB;
  state.counters["peak_allocated_MiB"] = peak_allocated / kMiB;
  state.counters["reserved_over_allocated"] = peak_allocated > 0 ? peak_reserved / peak_allocated : 0.0;
}

void replay_torch(const anatomy::testing::AllocTrace& trace) {
  anatomy::testing::replay(
      trace, [](size_t n) { return c10::cuda::CUDACachingAllocator::raw_alloc(n); },
      [](void* p) { c10::cuda::CUDACachingAllocator::raw_delete(p); });
}

void replay_anatomy(const anatomy::testing::AllocTrace& trace, anatomy::alloc::CachingAllocator& a) {
  anatomy::testing::replay(
      trace, [&](size_t n) { return a.raw_alloc(n, 0); }, [&](void* p) { a.raw_free(p); });
}

void report_anatomy_fragmentation(benchmark::State& state, const anatomy::testing::AllocTrace& trace,
                                  anatomy::alloc::CachingAllocator& a) {
  const anatomy::testing::FragmentationFigures f = anatomy::testing::replay_fragmentation(trace, a, 0);
  set_fragmentation_counters(state, static_cast<double>(f.peak_reserved), static_cast<double>(f.peak_allocated));
}

void report_torch_fragmentation(benchmark::State& state, const anatomy::testing::AllocTrace& trace) {
  const auto device = c10::cuda::current_device();
  c10::cuda::CUDACachingAllocator::emptyCache();
  c10::cuda::CUDACachingAllocator::resetPeakStats(device);
  replay_torch(trace);
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
  // Index 0 is StatType::AGGREGATE (all pools), whichever namespace this torch declares it in.
  set_fragmentation_counters(state, static_cast<double>(stats.reserved_bytes[0].peak),
                             static_cast<double>(stats.allocated_bytes[0].peak));
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

  anatomy::Tensor run_anatomy() {
    replay_anatomy(trace, anatomy::cuda::caching_allocator());
    return marker;
  }
  at::Tensor run_torch() {
    replay_torch(trace);
    return torch_marker;
  }
  void report_anatomy(benchmark::State& state) {
    report_anatomy_fragmentation(state, trace, anatomy::cuda::caching_allocator());
  }
  void report_torch(benchmark::State& state) { report_torch_fragmentation(state, trace); }
};

// The real trace's model: GPT-2 small's layers with a smaller vocabulary, in fp32 (by its sizes
// well under 20 GiB live; trace_peak_live_MiB reports it); one training step per sequence length.
anatomy::testing::TransformerStepConfig real_trace_config() {
  anatomy::testing::TransformerStepConfig c;
  c.layers = 12;
  c.hidden = 768;
  c.heads = 12;
  c.vocab = 8192;
  c.batch = 8;
  c.seq_lens = {512, 384, 448, 256, 480, 320, 416, 512};
  c.dtype = anatomy::DType::Float32;
  c.device = anatomy::Device(anatomy::DeviceType::CUDA, anatomy::cuda::current_device());
  return c;
}

// Room for every event of the run (some 10^5): a ring that drops events fails the recording.
constexpr size_t kHistoryEntries = size_t{1} << 22;

struct RealTrace {
  anatomy::testing::RecordedTrace recorded;
  anatomy::testing::AllocTraceSummary summary;
};

// Recorded on the first call (the training takes seconds), then shared by both sides' cases.
const RealTrace& real_trace() {
  static const RealTrace trace = [] {
    anatomy::alloc::CachingAllocator& device_allocator = anatomy::cuda::caching_allocator();
    std::vector<double> losses;
    RealTrace t;
    t.recorded = anatomy::testing::record_trace(
        device_allocator, kHistoryEntries, [&] { losses = anatomy::testing::train_transformer(real_trace_config()); });
    for (double l : losses) {
      ANATOMY_CHECK(std::isfinite(l), ValueError, "alloc_trace_transformer_real_cuda: the training's loss is {}", l);
    }
    t.summary = anatomy::testing::summarize(t.recorded.trace);
    ANATOMY_CHECK(t.summary.balanced && t.summary.allocs > 0, ValueError,
                  "alloc_trace_transformer_real_cuda: the recorded trace ({} allocations) does not balance",
                  t.summary.allocs);
    // Kept for later replays elsewhere (testing::read_trace): the simulated device, another allocator.
    if (const char* path = std::getenv("ANATOMY_ALLOC_TRACE_OUT"); path != nullptr && *path != '\0') {
      anatomy::testing::write_trace(path, t.recorded.trace);
    }
    device_allocator.empty_cache();  // the run's cached segments go back before the replays
    return t;
  }();
  return trace;
}

struct AllocTraceTransformerRealCuda : CaseDefaults {
  static constexpr const char* kName = "alloc_trace_transformer_real_cuda";
  static constexpr Timing kTiming = Timing::kHostSynced;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMillisecond;
  anatomy::Tensor anatomy_init =
      anatomy::zeros({1}, anatomy::TensorOptions().device(anatomy::Device(anatomy::DeviceType::CUDA)));
  at::Tensor torch_init = at::zeros({1}, at::TensorOptions().device(at::kCUDA));
  const RealTrace& real = real_trace();
  const anatomy::testing::AllocTrace& trace = real.recorded.trace;
  // A caching allocator of the row's own: nothing but the trace's blocks is ever in it (behind
  // pointers: the harness moves the case).
  std::unique_ptr<anatomy::cuda::CudaMemoryProvider> provider =
      std::make_unique<anatomy::cuda::CudaMemoryProvider>(anatomy::cuda::current_device());
  std::unique_ptr<anatomy::alloc::CachingAllocator> fresh =
      std::make_unique<anatomy::alloc::CachingAllocator>(*provider);
  anatomy::Tensor marker = anatomy::zeros({1});
  at::Tensor torch_marker = at::zeros({1});

  anatomy::Tensor run_anatomy() {
    replay_anatomy(trace, *fresh);
    return marker;
  }
  at::Tensor run_torch() {
    replay_torch(trace);
    return torch_marker;
  }
  void report_anatomy(benchmark::State& state) {
    report_anatomy_fragmentation(state, trace, *fresh);
    state.counters["trace_allocations"] = static_cast<double>(real.summary.allocs);
    state.counters["trace_peak_live_MiB"] = static_cast<double>(real.summary.peak_live) / kMiB;
    state.counters["history_events"] = static_cast<double>(real.recorded.events);
    state.counters["closed_blocks"] = static_cast<double>(real.recorded.closed);
    // The same replay on the simulated device: what the policy alone reserves.
    anatomy::alloc::SimulatedProvider sim(size_t{64} << 30);
    anatomy::alloc::CachingAllocator sim_allocator(sim, fresh->conf());
    const anatomy::testing::FragmentationFigures f = anatomy::testing::replay_fragmentation(trace, sim_allocator);
    state.counters["sim_peak_reserved_MiB"] = static_cast<double>(f.peak_reserved) / kMiB;
    state.counters["sim_peak_allocated_MiB"] = static_cast<double>(f.peak_allocated) / kMiB;
    state.counters["sim_reserved_over_allocated"] = f.reserved_over_allocated();
  }
  void report_torch(benchmark::State& state) { report_torch_fragmentation(state, trace); }
};

const int registered = register_pair<AllocTraceTransformerCuda>();
const int registered_real = register_pair<AllocTraceTransformerRealCuda>();

}  // namespace
}  // namespace peer
#endif
