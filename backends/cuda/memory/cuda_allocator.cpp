// The per-device allocators behind DeviceType::CUDA, caching or stream-ordered (see cuda_allocator.h).
#include "anatomy/backends/cuda/memory/cuda_allocator.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>

#include "anatomy/alloc/memory_snapshot.h"
#include "anatomy/backends/cuda/memory/async_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/runtime/stream.h"
#include "anatomy/backends/cuda/runtime/sync_debug.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace {

constexpr int kMaxDevices = 64;

// A device's allocator: the caching allocator over its provider (backend:native), or the
// stream-ordered one (backend:cudaMallocAsync), as the settings said at its first allocation.
// Never destroyed: tensors in static storage may be freed after every destructor of this library
// has run, and their blocks must still find their allocator. The exit hook below gives the cached
// memory back instead.
struct DeviceAllocator {
  std::unique_ptr<CudaMemoryProvider> provider;
  std::unique_ptr<alloc::CachingAllocator> caching;  // backend:native
  std::unique_ptr<AsyncAllocator> async;             // backend:cudaMallocAsync

  DeviceAllocator(int device, const alloc::AllocConf& conf) {
    if (conf.backend == alloc::AllocBackend::CudaMallocAsync) {
      async = std::make_unique<AsyncAllocator>(device, conf);
    } else {
      provider = std::make_unique<CudaMemoryProvider>(device);
      caching = std::make_unique<alloc::CachingAllocator>(*provider, conf);
    }
  }
  Allocator& allocator() { return async ? static_cast<Allocator&>(*async) : *caching; }
  void empty_cache() { async ? async->empty_cache() : caching->empty_cache(); }
};

std::array<std::atomic<DeviceAllocator*>, kMaxDevices> g_allocators{};
std::mutex g_create_mutex;

// Registered after the CUDA runtime has initialized (the first allocator is made after a CUDA
// call), so it runs before the runtime's own exit handler tears the context down.
void release_cached_segments() {
  for (auto& slot : g_allocators) {
    if (DeviceAllocator* a = slot.load(std::memory_order_acquire)) a->empty_cache();
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
  auto* a = new DeviceAllocator(device, alloc::alloc_conf_from_env());
  g_allocators[device].store(a, std::memory_order_release);
  return *a;
}

// The caching allocator of `device`, for `op`, which only the native backend has.
alloc::CachingAllocator& native(int device, const char* op) {
  DeviceAllocator& a = device_allocator(device);
  ANATOMY_CHECK(a.caching != nullptr, NotImplementedError,
                "{}: cuda:{} uses backend:cudaMallocAsync (CUDA's stream-ordered allocator), which has no "
                "caching allocator: segments, private pools and expandable segments need backend:native (its "
                "memory history and snapshot are cuda::record_memory_history and cuda::memory_snapshot)",
                op, device < 0 ? current_device() : device);
  return *a.caching;
}

class CudaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override { return device_allocator(current_device()).allocator().allocate(nbytes); }
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

alloc::AllocBackend allocator_backend(int device) {
  return device_allocator(device).async ? alloc::AllocBackend::CudaMallocAsync : alloc::AllocBackend::Native;
}

alloc::CachingAllocator& caching_allocator(int device) { return native(device, "cuda::caching_allocator"); }

AsyncAllocator& async_allocator(int device) {
  DeviceAllocator& a = device_allocator(device);
  ANATOMY_CHECK(a.async != nullptr, NotImplementedError,
                "cuda::async_allocator: cuda:{} uses backend:native (the caching allocator); set "
                "ANATOMY_CUDA_ALLOC_CONF=backend:cudaMallocAsync before its first allocation",
                device < 0 ? current_device() : device);
  return *a.async;
}

void* raw_alloc(size_t nbytes, alloc::StreamId stream, int device) {
  DeviceAllocator& a = device_allocator(device);
  return a.async ? a.async->raw_alloc(nbytes, stream) : a.caching->raw_alloc(nbytes, stream);
}

void raw_free(void* ptr, int device) {
  DeviceAllocator& a = device_allocator(device);
  a.async ? a.async->raw_free(ptr) : a.caching->raw_free(ptr);
}

void record_stream_use(void* ptr, alloc::StreamId stream, int device) {
  DeviceAllocator& a = device_allocator(device);
  a.async ? a.async->record_stream(ptr, stream) : a.caching->record_stream(ptr, stream);
}

namespace {

// The allocator of `device` (-1: the current one) for public function `op`, which names itself in
// the error where the device does not exist.
DeviceAllocator& allocator_for(int device, const char* op) {
  return device_allocator(resolve_device_index(device, op));
}

alloc::MemoryStats stats_for(int device, const char* op) {
  DeviceAllocator& a = allocator_for(device, op);
  return a.async ? a.async->stats() : a.caching->stats();
}

}  // namespace

alloc::MemoryStats memory_stats(int device) { return stats_for(device, "memory_stats"); }

int64_t memory_allocated(int device) {
  return stats_for(device, "memory_allocated").allocated_bytes[alloc::StatType::All].current;
}

int64_t max_memory_allocated(int device) {
  return stats_for(device, "max_memory_allocated").allocated_bytes[alloc::StatType::All].peak;
}

int64_t memory_reserved(int device) {
  return stats_for(device, "memory_reserved").reserved_bytes[alloc::StatType::All].current;
}

int64_t max_memory_reserved(int device) {
  return stats_for(device, "max_memory_reserved").reserved_bytes[alloc::StatType::All].peak;
}

void reset_peak_memory_stats(int device) {
  DeviceAllocator& a = allocator_for(device, "reset_peak_memory_stats");
  a.async ? a.async->reset_peak_stats() : a.caching->reset_peak_stats();
}

std::string memory_summary(int device) {
  DeviceAllocator& a = allocator_for(device, "memory_summary");
  return a.async ? a.async->memory_summary() : a.caching->memory_summary();
}

void record_memory_history(bool enabled, size_t max_entries, int device) {
  DeviceAllocator& a = allocator_for(device, "record_memory_history");
  a.async ? a.async->record_memory_history(enabled, max_entries)
          : a.caching->record_memory_history(enabled, max_entries);
}

alloc::MemorySnapshot memory_snapshot(int device) {
  DeviceAllocator& a = allocator_for(device, "memory_snapshot");
  return a.async ? a.async->memory_snapshot() : a.caching->memory_snapshot();
}

void empty_cache() {
  check_synchronization("cuda::empty_cache", "cudaDeviceSynchronize before releasing cached segments");
  release_cached_segments();
}

alloc::PoolId create_pool(int device) { return native(device, "cuda::create_pool").create_pool(); }

void retain_pool(alloc::PoolId pool, int device) { native(device, "cuda::retain_pool").retain_pool(pool); }

void release_pool(alloc::PoolId pool, int device) { native(device, "cuda::release_pool").release_pool(pool); }

void begin_allocate_to_pool(alloc::PoolId pool, alloc::StreamFilter filter, int device) {
  native(device, "cuda::begin_allocate_to_pool").begin_allocate_to_pool(pool, std::move(filter));
}

void begin_allocate_current_thread_to_pool(alloc::PoolId pool, const Stream& stream) {
  native(stream.device_index(), "cuda::begin_allocate_current_thread_to_pool")
      .begin_allocate_to_pool(pool, alloc::current_thread_on_stream(stream_id(stream.handle())));
}

void begin_allocate_current_thread_to_pool(alloc::PoolId pool, int device) {
  native(device, "cuda::begin_allocate_current_thread_to_pool").begin_allocate_to_pool(pool, alloc::current_thread());
}

void end_allocate_to_pool(alloc::PoolId pool, int device) {
  native(device, "cuda::end_allocate_to_pool").end_allocate_to_pool(pool);
}

alloc::PoolStats pool_stats(alloc::PoolId pool, int device) {
  return native(device, "cuda::pool_stats").pool_stats(pool);
}

}  // namespace anatomy::cuda
