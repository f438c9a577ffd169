// The GPT-style transformer of testing/transformer_step.h trained on CUDA, and the allocation
// trace recorded from it through the device allocator's memory history
// (testing/alloc_trace_record.h): the path bench/peer/alloc_trace.cpp's real-trace row takes at
// full size, here small enough for the GPU test run. The trace balances and replays through a
// fresh caching allocator over the CUDA provider and over the simulated device with the peaks it
// asks for; bf16 training runs too.
#include <cmath>
#include <vector>

#include "anatomy/alloc/simulated_provider.h"
#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/testing/alloc_trace_record.h"
#include "anatomy/testing/alloc_trace_replay.h"
#include "anatomy/testing/transformer_step.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

testing::TransformerStepConfig small_on_cuda() {
  testing::TransformerStepConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 256;
  c.batch = 4;
  c.seq_lens = {64, 48, 80, 32, 64, 72, 40, 56, 80, 64};
  c.device = kCuda;
  c.adamw = {.lr = 1e-2, .weight_decay = 1e-2};
  return c;
}

}  // namespace

TEST_CASE("cuda transformer trace: training on CUDA records a balanced trace that replays to its peaks") {
  ANATOMY_REQUIRE_GPU();
  const testing::TransformerStepConfig c = small_on_cuda();
  std::vector<double> losses;
  alloc::CachingAllocator& device_allocator = cuda::caching_allocator(0);
  const testing::RecordedTrace r =
      testing::record_trace(device_allocator, size_t{1} << 20, [&] { losses = testing::train_transformer(c); });
  REQUIRE(losses.size() == c.seq_lens.size());
  for (double l : losses) CHECK(std::isfinite(l));
  CHECK(losses.back() < losses.front());
  const testing::AllocTraceSummary s = testing::summarize(r.trace);
  CHECK(s.balanced);
  CHECK(s.allocs > 500);  // forward, backward and optimizer of ten steps
  MESSAGE("loss " << losses.front() << " -> " << losses.back() << "; " << s.allocs << " allocations from " << r.events
                  << " events, " << r.closed << " left live, " << r.earlier_frees
                  << " frees of earlier blocks, peak live " << s.peak_live << " bytes");

  cuda::CudaMemoryProvider provider(0);
  alloc::CachingAllocator on_device(provider, alloc::AllocConf{});
  const testing::FragmentationFigures d = testing::replay_fragmentation(r.trace, on_device);
  alloc::SimulatedProvider sim(size_t{16} << 30);
  alloc::CachingAllocator on_sim(sim, alloc::AllocConf{});
  const testing::FragmentationFigures f = testing::replay_fragmentation(r.trace, on_sim);
  MESSAGE("CUDA: reserved / allocated " << d.peak_reserved << " / " << d.peak_allocated << " = "
                                        << d.reserved_over_allocated() << "; simulated: " << f.peak_reserved << " / "
                                        << f.peak_allocated << " = " << f.reserved_over_allocated());
  CHECK(d.peak_requested == static_cast<int64_t>(s.peak_live));
  CHECK(f.peak_requested == static_cast<int64_t>(s.peak_live));
  CHECK(d.peak_allocated >= d.peak_requested);
  CHECK(d.peak_reserved >= d.peak_allocated);
  // The same policy on either device; only ties between equal-sized free blocks, broken by
  // address, may choose differently.
  CHECK(std::fabs(static_cast<double>(d.peak_reserved - f.peak_reserved)) <=
        0.1 * static_cast<double>(f.peak_reserved));
  CHECK(on_device.stats().allocated_bytes[alloc::StatType::All].current == 0);
}

TEST_CASE("cuda transformer trace: bfloat16 parameters train on CUDA") {
  ANATOMY_REQUIRE_GPU();
  testing::TransformerStepConfig c = small_on_cuda();
  c.dtype = DType::BFloat16;
  c.seq_lens = {64, 48, 80};
  const std::vector<double> losses = testing::train_transformer(c);
  for (double l : losses) CHECK(std::isfinite(l));
}
