// The per-device caching allocators behind DeviceType::CUDA (see cuda_allocator.h).
#include "anatomy/backends/cuda/cuda_allocator.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>

#include "anatomy/backends/cuda/cuda_memory_provider.h"
#include "anatomy/backends/cuda/device.h"
#include "anatomy/backends/cuda/stream.h"
#include "anatomy/backends/cuda/sync_debug.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace {

constexpr int kMaxDevices = 64;

// A device's provider and allocator. Never destroyed: tensors in static storage may be freed
// after every destructor of this library has run, and their blocks must still find their
// allocator. The exit hook below gives the cached memory back instead.
struct DeviceAllocator {
  CudaMemoryProvider provider;
  alloc::CachingAllocator allocator;
  explicit DeviceAllocator(int device) : provider(device), allocator(provider) {}
};

std::array<std::atomic<DeviceAllocator*>, kMaxDevices> g_allocators{};
std::mutex g_create_mutex;

// Registered after the CUDA runtime has initialized (the first allocator is made after a CUDA
// call), so it runs before the runtime's own exit handler tears the context down.
void release_cached_segments() {
  for (auto& slot : g_allocators) {
    if (DeviceAllocator* a = slot.load(std::memory_order_acquire)) a->allocator.empty_cache();
  }
}

void release_cache_at_exit() {
  try {
    release_cached_segments();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "anatomy: warning: releasing the CUDA cache at exit failed: %s\n", e.what());
  }
}

DeviceAllocator& device_allocator(int device) {
  if (device < 0) device = current_device();
  ANATOMY_CHECK(device < kMaxDevices, DeviceError, "cuda allocator: device index {} is beyond the {} supported", device,
                kMaxDevices);
  if (DeviceAllocator* a = g_allocators[device].load(std::memory_order_acquire)) return *a;
  std::lock_guard<std::mutex> g(g_create_mutex);
  if (DeviceAllocator* a = g_allocators[device].load(std::memory_order_relaxed)) return *a;
  static const bool hooked = [] { return std::atexit(&release_cache_at_exit) == 0; }();
  (void)hooked;
  auto* a = new DeviceAllocator(device);
  g_allocators[device].store(a, std::memory_order_release);
  return *a;
}

class CudaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override { return device_allocator(current_device()).allocator.allocate(nbytes); }
};

const bool registered = [] {
  set_allocator(DeviceType::CUDA, cuda_allocator());
  return true;
}();

}  // namespace

Allocator* cuda_allocator() {
  static CudaAllocator allocator;
  return &allocator;
}

alloc::CachingAllocator& caching_allocator(int device) { return device_allocator(device).allocator; }

alloc::MemoryStats memory_stats(int device) { return caching_allocator(device).stats(); }

int64_t memory_allocated(int device) { return memory_stats(device).allocated_bytes[alloc::StatType::All].current; }

int64_t memory_reserved(int device) { return memory_stats(device).reserved_bytes[alloc::StatType::All].current; }

void reset_peak_memory_stats(int device) { caching_allocator(device).reset_peak_stats(); }

std::string memory_summary(int device) { return caching_allocator(device).memory_summary(); }

void empty_cache() {
  check_synchronization("cuda::empty_cache", "cudaDeviceSynchronize before releasing cached segments");
  release_cached_segments();
}

alloc::PoolId create_pool(int device) { return caching_allocator(device).create_pool(); }

void retain_pool(alloc::PoolId pool, int device) { caching_allocator(device).retain_pool(pool); }

void release_pool(alloc::PoolId pool, int device) { caching_allocator(device).release_pool(pool); }

void begin_allocate_to_pool(alloc::PoolId pool, alloc::StreamFilter filter, int device) {
  caching_allocator(device).begin_allocate_to_pool(pool, std::move(filter));
}

void begin_allocate_current_thread_to_pool(alloc::PoolId pool, const Stream& stream) {
  caching_allocator(stream.device_index())
      .begin_allocate_to_pool(pool, alloc::current_thread_on_stream(stream_id(stream.handle())));
}

void begin_allocate_current_thread_to_pool(alloc::PoolId pool, int device) {
  caching_allocator(device).begin_allocate_to_pool(pool, alloc::current_thread());
}

void end_allocate_to_pool(alloc::PoolId pool, int device) { caching_allocator(device).end_allocate_to_pool(pool); }

alloc::PoolStats pool_stats(alloc::PoolId pool, int device) { return caching_allocator(device).pool_stats(pool); }

}  // namespace anatomy::cuda
