// The caching allocator's policy measured without a GPU, for `gpu-anatomy c03`: the transformer
// trace (alloc_trace.h) replayed under an ALLOC_CONF setting, and an out-of-memory provoked with
// per_process_memory_fraction and recovered from, both on the simulated device
// (alloc/simulated_provider.h). The policy is the one the CUDA allocator runs, so the figures are
// the CUDA allocator's for the same requests. The tool reaches the allocator's internals only
// through this file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace anatomy::testing {

struct SimulatedFragmentation {
  std::string conf;  // the setting as the parser writes it back ("" for the defaults)
  int64_t allocations = 0;
  int64_t peak_requested = 0, peak_allocated = 0, peak_reserved = 0;
  int64_t provider_allocs = 0;  // reservations made from the device (cudaMalloc calls on CUDA)
  int64_t provider_maps = 0;    // pages mapped into expandable segments (cuMemMap calls)
  double reserved_over_allocated() const {
    return peak_allocated > 0 ? static_cast<double>(peak_reserved) / static_cast<double>(peak_allocated) : 0.0;
  }
};
// The trace replayed from an empty cache under `alloc_conf` (ANATOMY_CUDA_ALLOC_CONF's syntax;
// a bad setting raises the parser's ValueError).
SimulatedFragmentation simulated_fragmentation(const std::string& alloc_conf);

struct SimulatedOom {
  int64_t device_bytes = 0, allowed_bytes = 0;  // the device, and what the fraction allows
  int64_t block_bytes = 0;
  int blocks_before_oom = 0;  // blocks handed out before the request that failed
  std::string message;        // the allocator's OutOfMemoryError
  int64_t reserved_at_oom = 0;
  bool recovered = false;  // after freeing them, the same request succeeded
  std::string summary;     // memory_summary() after the recovery
};
// Blocks of `block_mib` MiB requested one after another from a `device_mib` MiB device limited to
// `fraction` of it, until the allocator refuses one; then every block is freed, the cache
// emptied, and the request made again.
SimulatedOom simulated_oom(int64_t device_mib, double fraction, int64_t block_mib);

// A simulated device of `capacity_mib` MiB with the CUDA allocator's policy and the default
// ALLOC_CONF, one stream: blocks asked for and given back one at a time, and the allocator's
// figures after each step (c03 lifecycle on a machine without a GPU).
class SimulatedDevice {
 public:
  explicit SimulatedDevice(int64_t capacity_mib);
  ~SimulatedDevice();
  SimulatedDevice(const SimulatedDevice&) = delete;
  SimulatedDevice& operator=(const SimulatedDevice&) = delete;
  void* alloc(int64_t bytes);  // OutOfMemoryError past the capacity
  void free(void* block);
  void empty_cache();
  int64_t allocated() const;  // bytes of the blocks handed out (memory_allocated)
  int64_t reserved() const;   // bytes held from the device (memory_reserved)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace anatomy::testing
