// The caching pinned host allocator (see pinned_allocator.h).
#include "anatomy/backends/cuda/memory/pinned_allocator.h"

#include <cuda_runtime_api.h>

#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "anatomy/alloc/alloc_conf.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace {

struct PendingEvent {
  cudaEvent_t event;
  int device;
};

struct Block {
  void* ptr = nullptr;
  size_t size = 0;  // a power of two
  bool in_use = false;
  bool registered = false;           // malloc + cudaHostRegister rather than cudaHostAlloc
  std::vector<PendingEvent> events;  // recorded by copies using the block
};

constexpr size_t kMinBlock = 512;

class PinnedCache {
 public:
  DataPtr allocate(size_t nbytes) {
    if (nbytes == 0) return DataPtr(nullptr, Device(DeviceType::CPU));
    const size_t size = std::bit_ceil(std::max(nbytes, kMinBlock));
    const int cls = std::countr_zero(size);
    std::lock_guard<std::mutex> g(mutex_);
    process_pending();
    Block* b = nullptr;
    if (!free_[cls].empty()) {
      b = free_[cls].back();
      free_[cls].pop_back();
    } else {
      b = new_block(size);
    }
    b->in_use = true;
    stats_.allocated_bytes += static_cast<int64_t>(b->size);
    ++stats_.allocations;
    return DataPtr(b->ptr, b, &PinnedCache::free_block, Device(DeviceType::CPU));
  }

  void record(const void* ptr, void* stream) {
    std::lock_guard<std::mutex> g(mutex_);
    Block* b = find(ptr);
    if (b == nullptr) return;  // pinned memory from elsewhere: its owner keeps it alive
    cudaEvent_t e = take_event();
    ANATOMY_CUDA_CHECK(cudaEventRecord(e, static_cast<cudaStream_t>(stream)));
    b->events.push_back({e, current_device()});
  }

  PinnedMemoryStats stats() {
    std::lock_guard<std::mutex> g(mutex_);
    return stats_;
  }

  void empty_cache() {
    std::lock_guard<std::mutex> g(mutex_);
    process_pending();
    for (auto& list : free_) {
      for (Block* b : list) release(b);
      list.clear();
    }
  }

 private:
  static void free_block(void* ctx) { instance().give_back(static_cast<Block*>(ctx)); }

  void give_back(Block* b) {
    std::lock_guard<std::mutex> g(mutex_);
    b->in_use = false;
    stats_.allocated_bytes -= static_cast<int64_t>(b->size);
    if (b->events.empty()) free_[std::countr_zero(b->size)].push_back(b);
    else pending_.push_back(b);
  }

  // Moves freed blocks whose copies have all completed to the free lists; never waits.
  void process_pending() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      Block* b = *it;
      while (!b->events.empty()) {
        const PendingEvent& pe = b->events.back();
        const cudaError_t err = cudaEventQuery(pe.event);
        if (err == cudaErrorNotReady) {
          (void)cudaGetLastError();
          break;
        }
        if (err != cudaSuccess) detail::throw_cuda_error(err, "cudaEventQuery", __FILE__, __LINE__);
        event_pool_.push_back(pe.event);
        b->events.pop_back();
      }
      if (b->events.empty()) {
        free_[std::countr_zero(b->size)].push_back(b);
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }

  Block* new_block(size_t size) {
    check_available("pin_memory");
    auto b = std::make_unique<Block>();
    b->size = size;
    if (alloc::alloc_conf_from_env().pinned_use_cuda_host_register) {
      b->ptr = std::malloc(size);
      ANATOMY_CHECK(b->ptr != nullptr, OutOfMemoryError, "pin_memory: malloc of {} bytes failed", size);
      const cudaError_t err = cudaHostRegister(b->ptr, size, cudaHostRegisterDefault);
      if (err != cudaSuccess) {
        std::free(b->ptr);
        detail::throw_cuda_error(err, "cudaHostRegister", __FILE__, __LINE__);
      }
      b->registered = true;
    } else {
      ANATOMY_CUDA_CHECK(cudaHostAlloc(&b->ptr, size, cudaHostAllocDefault));
    }
    if (!hooked_) hooked_ = std::atexit(&release_at_exit) == 0;  // after the runtime's own hook
    stats_.reserved_bytes += static_cast<int64_t>(size);
    ++stats_.host_allocs;
    Block* raw = b.release();
    blocks_.emplace(reinterpret_cast<uintptr_t>(raw->ptr), raw);
    return raw;
  }

  void release(Block* b) {
    blocks_.erase(reinterpret_cast<uintptr_t>(b->ptr));
    stats_.reserved_bytes -= static_cast<int64_t>(b->size);
    if (b->registered) {
      cudaHostUnregister(b->ptr);
      std::free(b->ptr);
    } else {
      cudaFreeHost(b->ptr);
    }
    delete b;
  }

  // The block whose [ptr, ptr + size) holds p (a tensor's data may start inside its block).
  Block* find(const void* p) {
    const auto addr = reinterpret_cast<uintptr_t>(p);
    auto it = blocks_.upper_bound(addr);
    if (it == blocks_.begin()) return nullptr;
    --it;
    return addr < it->first + it->second->size ? it->second : nullptr;
  }

  cudaEvent_t take_event() {
    if (!event_pool_.empty()) {
      cudaEvent_t e = event_pool_.back();
      event_pool_.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    ANATOMY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }

  static void release_at_exit() {
    try {
      instance().empty_cache();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "anatomy: warning: releasing pinned memory at exit failed: %s\n", e.what());
    }
  }

 public:
  // Never destroyed: pinned tensors in static storage may die after this library's destructors.
  static PinnedCache& instance() {
    static auto* cache = new PinnedCache;
    return *cache;
  }

 private:
  std::mutex mutex_;
  std::map<uintptr_t, Block*> blocks_;
  std::array<std::vector<Block*>, 64> free_{};
  std::deque<Block*> pending_;
  std::vector<cudaEvent_t> event_pool_;
  PinnedMemoryStats stats_;
  bool hooked_ = false;
};

class PinnedAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override { return PinnedCache::instance().allocate(nbytes); }
};

}  // namespace

Allocator* pinned_allocator() {
  static PinnedAllocator allocator;
  return &allocator;
}

Tensor pin_memory(const Tensor& t) {
  ANATOMY_CHECK(t.is_cpu(), ValueError, "pin_memory: only CPU tensors can be pinned, got a tensor on {}",
                t.device().str());
  Tensor pinned = make_empty_tensor(t.sizes(), t.dtype(), pinned_allocator(), MemoryFormat::Contiguous, "pin_memory");
  pinned.copy_(t);
  return pinned;
}

bool is_pinned(const void* ptr) {
  if (ptr == nullptr || device_count() == 0) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    (void)cudaGetLastError();  // memory CUDA does not know is not pinned
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

bool is_pinned(const Tensor& t) { return t.is_cpu() && is_pinned(t.data_ptr()); }

void record_pinned_use(const void* ptr, void* stream) { PinnedCache::instance().record(ptr, stream); }

PinnedMemoryStats pinned_memory_stats() { return PinnedCache::instance().stats(); }

void empty_pinned_cache() { PinnedCache::instance().empty_cache(); }

}  // namespace anatomy::cuda
