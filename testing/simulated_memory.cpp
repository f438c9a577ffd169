// The allocator policy figures of gpu-anatomy c03 on the simulated device (simulated_memory.h).
#include "anatomy/testing/simulated_memory.h"

#include <vector>

#include "anatomy/alloc/alloc_conf.h"
#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/simulated_provider.h"
#include "anatomy/core/error.h"
#include "anatomy/testing/alloc_trace_replay.h"

namespace anatomy::testing {

SimulatedFragmentation simulated_fragmentation(const std::string& alloc_conf) {
  const alloc::AllocConf conf = alloc::parse_alloc_conf(alloc_conf, "--conf");
  // Capacity never the limit: only the policy decides what is reserved.
  alloc::SimulatedProvider device(64 * 1024 * alloc::kMB);
  alloc::CachingAllocator cache(device, conf);
  const AllocTrace trace = transformer_trace();
  const FragmentationFigures f = replay_fragmentation(trace, cache);
  SimulatedFragmentation r;
  r.conf = alloc::to_string(conf);
  r.allocations = static_cast<int64_t>(trace.size() / 2);
  r.peak_requested = f.peak_requested;
  r.peak_allocated = f.peak_allocated;
  r.peak_reserved = f.peak_reserved;
  r.provider_allocs = cache.stats().num_provider_allocs;
  r.provider_maps = cache.stats().num_provider_maps;
  return r;
}

SimulatedOom simulated_oom(int64_t device_mib, double fraction, int64_t block_mib) {
  alloc::AllocConf conf;
  conf.per_process_memory_fraction = fraction;
  alloc::SimulatedProvider device(static_cast<size_t>(device_mib) * alloc::kMB);
  alloc::CachingAllocator cache(device, conf);
  SimulatedOom r;
  r.device_bytes = device_mib * static_cast<int64_t>(alloc::kMB);
  r.allowed_bytes = static_cast<int64_t>(static_cast<double>(r.device_bytes) * fraction);
  r.block_bytes = block_mib * static_cast<int64_t>(alloc::kMB);
  std::vector<void*> blocks;
  const size_t n = static_cast<size_t>(r.block_bytes);
  try {
    for (;;) {
      blocks.push_back(cache.raw_alloc(n, 0));
      if (blocks.size() > 100000) break;  // a fraction that never refuses: nothing to show
    }
  } catch (const OutOfMemoryError& e) {
    r.message = e.what();
  }
  r.blocks_before_oom = static_cast<int>(blocks.size());
  r.reserved_at_oom = cache.stats().reserved_bytes[alloc::StatType::All].current;
  for (void* p : blocks) cache.raw_free(p);
  cache.empty_cache();
  void* again = cache.raw_alloc(n, 0);
  r.recovered = again != nullptr;
  cache.raw_free(again);
  r.summary = cache.memory_summary();
  return r;
}

struct SimulatedDevice::Impl {
  explicit Impl(int64_t capacity_mib) : device(static_cast<size_t>(capacity_mib) * alloc::kMB), cache(device, {}) {}
  alloc::SimulatedProvider device;
  alloc::CachingAllocator cache;
};

SimulatedDevice::SimulatedDevice(int64_t capacity_mib) : impl_(std::make_unique<Impl>(capacity_mib)) {}
SimulatedDevice::~SimulatedDevice() = default;
void* SimulatedDevice::alloc(int64_t bytes) { return impl_->cache.raw_alloc(static_cast<size_t>(bytes), 0); }
void SimulatedDevice::free(void* block) { impl_->cache.raw_free(block); }
void SimulatedDevice::empty_cache() { impl_->cache.empty_cache(); }
int64_t SimulatedDevice::allocated() const {
  return impl_->cache.stats().allocated_bytes[alloc::StatType::All].current;
}
int64_t SimulatedDevice::reserved() const { return impl_->cache.stats().reserved_bytes[alloc::StatType::All].current; }

}  // namespace anatomy::testing
