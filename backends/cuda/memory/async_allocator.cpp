// AsyncAllocator (see async_allocator.h). Every call makes the allocator's device current for its
// duration: a tensor may be freed on a thread whose current device is another one, and
// cudaMallocAsync on the legacy default stream allocates on the current device.
#include "anatomy/backends/cuda/memory/async_allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "anatomy/alloc/memory_history.h"
#include "anatomy/alloc/memory_snapshot.h"
#include "anatomy/alloc/memory_summary.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/error.h"
#include "anatomy/dispatch/current_op.h"

namespace anatomy::cuda {
namespace {

using alloc::StatType;
using alloc::StreamId;

// The stats split small and large as the caching allocator's pools do (requests up to 1 MiB are
// small), so the summary's rows mean the same on both backends.
constexpr size_t kSmallSize = alloc::kMB;

uint64_t pool_attribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  uint64_t value = 0;
  ANATOMY_CUDA_CHECK(cudaMemPoolGetAttribute(pool, attr, &value));
  return value;
}

}  // namespace

struct AsyncAllocator::Impl {
  // One live allocation. It is the DataPtr's deleter context, so it names its owner.
  struct Allocation {
    Impl* owner;
    void* ptr;
    size_t size;
    StreamId stream;                       // where it was allocated, and is freed
    std::unordered_set<StreamId> used_on;  // other streams given to record_stream
    const char* op = nullptr;              // who allocated it, while the history records
  };

  int index;
  Device device;
  cudaMemPool_t pool = nullptr;
  size_t total = 0;
  double memory_fraction;
  mutable std::mutex mutex;
  std::unordered_map<void*, Allocation*> live;
  alloc::MemoryStats counted;  // what this wrapper counts; the pool's figures are added by stats()
  alloc::MemoryHistory history;

  Impl(int device_index, const alloc::AllocConf& conf)
      : index(device_index),
        device(DeviceType::CUDA, static_cast<Device::Index>(device_index)),
        memory_fraction(conf.per_process_memory_fraction) {
    DeviceGuard guard(index);
    int supported = 0;
    ANATOMY_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, index));
    ANATOMY_CHECK(supported != 0, NotImplementedError,
                  "cuda async allocator: {} has no stream-ordered memory pools, so backend:cudaMallocAsync "
                  "cannot serve it; use backend:native",
                  device.str());
    size_t free_bytes = 0;
    ANATOMY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    ANATOMY_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, index));
    // The pool's default threshold, 0, hands free memory back to the driver at every
    // synchronization; a caching allocator keeps it (empty_cache trims it explicitly).
    uint64_t threshold = conf.caching ? UINT64_MAX : 0;
    ANATOMY_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  }

  static StatType type_of(size_t size) { return size <= kSmallSize ? StatType::Small : StatType::Large; }

  void trace(alloc::TraceAction action, const void* address, size_t size, StreamId stream) {
    if (history.enabled()) history.record(action, address, size, stream);
  }

  void count(alloc::StatArray& a, StatType t, int64_t amount) {
    if (amount >= 0) {
      a[StatType::All].increase(amount);
      a[t].increase(amount);
    } else {
      a[StatType::All].decrease(-amount);
      a[t].decrease(-amount);
    }
  }

  void trim() {
    ANATOMY_CUDA_CHECK(cudaDeviceSynchronize());
    ++counted.num_sync_all_streams;
    ANATOMY_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
  }

  // cudaMallocAsync, or nullptr when the pool cannot grow (the error is cleared: it is not sticky).
  void* try_malloc(size_t nbytes, StreamId stream) {
    void* ptr = nullptr;
    const cudaError_t err = cudaMallocAsync(&ptr, nbytes, stream_of(stream));
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    if (err != cudaSuccess) detail::throw_cuda_error(err, "cudaMallocAsync", __FILE__, __LINE__);
    return ptr;
  }

  // Called with the lock held.
  Allocation* malloc(size_t nbytes, StreamId stream) {
    DeviceGuard guard(index);
    const int64_t allocated = counted.allocated_bytes[StatType::All].current;
    const bool over_limit = memory_fraction < 1.0 && static_cast<double>(allocated) + static_cast<double>(nbytes) >
                                                         memory_fraction * static_cast<double>(total);
    void* ptr = over_limit ? nullptr : try_malloc(nbytes, stream);
    if (!ptr && !over_limit) {
      // The pool may hold memory freed on other streams that it cannot hand to this one yet, in
      // pieces that do not fit: wait for the device (every pending free completes), give the pool's
      // free memory back to the driver, and try once more, as PyTorch's backend does.
      trim();
      ++counted.num_alloc_retries;
      ptr = try_malloc(nbytes, stream);
    }
    if (!ptr) throw_oom(nbytes, stream, over_limit);
    auto* a = new Allocation{this, ptr, nbytes, stream, {}};
    live.emplace(ptr, a);
    if (history.enabled()) {
      history.record(alloc::TraceAction::Alloc, ptr, nbytes, stream);
      a->op = dispatch::current_op_name();
    }
    const StatType t = type_of(nbytes);
    const auto n = static_cast<int64_t>(nbytes);
    count(counted.allocation, t, 1);
    count(counted.allocated_bytes, t, n);
    count(counted.requested_bytes, t, n);
    ++counted.num_provider_allocs;
    return a;
  }

  // Called with the lock held. The allocation stream waits for the work queued so far on every
  // stream that used the memory, so the pool may reuse it once the free is reached in stream order.
  void free(Allocation* a) {
    DeviceGuard guard(index);
    trace(alloc::TraceAction::FreeRequested, a->ptr, a->size, a->stream);
    const cudaStream_t stream = stream_of(a->stream);
    for (StreamId s : a->used_on) {
      cudaEvent_t event = nullptr;
      ANATOMY_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
      ANATOMY_CUDA_CHECK(cudaEventRecord(event, stream_of(s)));
      ANATOMY_CUDA_CHECK(cudaStreamWaitEvent(stream, event, 0));
      ANATOMY_CUDA_CHECK(cudaEventDestroy(event));  // the wait already queued keeps what it needs
    }
    ANATOMY_CUDA_CHECK(cudaFreeAsync(a->ptr, stream));
    trace(alloc::TraceAction::FreeCompleted, a->ptr, a->size, a->stream);
    forget(a);
  }

  // The bookkeeping of a free, without CUDA.
  void forget(Allocation* a) {
    live.erase(a->ptr);
    const StatType t = type_of(a->size);
    const auto n = static_cast<int64_t>(a->size);
    count(counted.allocation, t, -1);
    count(counted.allocated_bytes, t, -n);
    count(counted.requested_bytes, t, -n);
    ++counted.num_provider_frees;
    delete a;
  }

  [[noreturn]] void throw_oom(size_t nbytes, StreamId stream, bool over_limit) {
    ++counted.num_ooms;
    trace(alloc::TraceAction::Oom, nullptr, nbytes, stream);
    size_t free_bytes = 0, total_bytes = 0;
    ANATOMY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const auto allocated = static_cast<size_t>(counted.allocated_bytes[StatType::All].current);
    const uint64_t reserved = pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent);
    const uint64_t used = pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent);
    std::string limit;
    if (memory_fraction < 1.0) {
      limit = fmt::format(" This process may use {} of it (per_process_memory_fraction {}){}.",
                          alloc::format_bytes(static_cast<int64_t>(memory_fraction * static_cast<double>(total))),
                          memory_fraction, over_limit ? ", which this request would exceed" : "");
    }
    ANATOMY_THROW(OutOfMemoryError,
                  "cuda async allocator (backend:cudaMallocAsync): out of memory. Tried to allocate {} on stream "
                  "{}. Device {} has a total capacity of {} of which {} is free.{} anatomy has {} allocated; the "
                  "device's memory pool reserves {}, of which {} is in use (the rest was given back to the driver "
                  "before this error, so memory is not cached here). Memory held by other processes or by other "
                  "allocators of this device is not the pool's; with backend:native the caching allocator's "
                  "knobs (max_split_size_mb, expandable_segments:True) apply instead.",
                  alloc::format_bytes(static_cast<int64_t>(nbytes)), stream, device.str(),
                  alloc::format_bytes(static_cast<int64_t>(total_bytes)),
                  alloc::format_bytes(static_cast<int64_t>(free_bytes)), limit,
                  alloc::format_bytes(static_cast<int64_t>(allocated)),
                  alloc::format_bytes(static_cast<int64_t>(reserved)), alloc::format_bytes(static_cast<int64_t>(used)));
  }

  // Called with the lock held.
  alloc::MemoryStats stats() const {
    alloc::MemoryStats s = counted;
    // The pool's own figures: what it holds from the driver, and what its live allocations cover
    // (their sizes as the pool rounds them, until their frees are reached in stream order).
    // A watermark just reset to 0 may read below the current value; a peak never does.
    const auto from_pool = [&](alloc::Stat& stat, cudaMemPoolAttr current, cudaMemPoolAttr high) {
      stat.current = static_cast<int64_t>(pool_attribute(pool, current));
      stat.peak = std::max(stat.current, static_cast<int64_t>(pool_attribute(pool, high)));
    };
    from_pool(s.reserved_bytes[StatType::All], cudaMemPoolAttrReservedMemCurrent, cudaMemPoolAttrReservedMemHigh);
    from_pool(s.active_bytes[StatType::All], cudaMemPoolAttrUsedMemCurrent, cudaMemPoolAttrUsedMemHigh);
    return s;
  }

  Allocation* find(void* ptr, const char* op) {
    auto it = live.find(ptr);
    ANATOMY_CHECK(it != live.end(), ValueError,
                  "{}: {} was not allocated by the cuda async allocator of {} (or was already freed)", op, ptr,
                  device.str());
    return it->second;
  }
};

namespace {

void delete_allocation(void* ctx) {
  auto* a = static_cast<AsyncAllocator::Impl::Allocation*>(ctx);
  AsyncAllocator::Impl* impl = a->owner;
  std::lock_guard<std::mutex> g(impl->mutex);
  try {
    impl->free(a);
  } catch (const std::exception& e) {
    // A deleter must not throw. A tensor in static storage may die after CUDA's runtime has torn
    // its context down at exit, and its memory went with the context; any other failure leaves the
    // device broken, so say so and go on.
    impl->forget(a);
    const std::string_view what = e.what();
    if (what.find("cudaErrorCudartUnloading") == std::string_view::npos &&
        what.find("cudaErrorContextIsDestroyed") == std::string_view::npos) {
      std::fprintf(stderr, "anatomy: warning: freeing CUDA memory (backend:cudaMallocAsync) failed: %s\n", e.what());
    }
  }
}

}  // namespace

AsyncAllocator::AsyncAllocator(int device, const alloc::AllocConf& conf)
    : impl_(std::make_unique<Impl>(resolve_device_index(device, "cuda async allocator"), conf)) {}

AsyncAllocator::~AsyncAllocator() {
  if (impl_->history.enabled()) dispatch::remove_op_name_listener();
}

DataPtr AsyncAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return DataPtr(nullptr, impl_->device);
  const StreamId stream = stream_id(current_stream(impl_->index).handle());
  std::lock_guard<std::mutex> g(impl_->mutex);
  Impl::Allocation* a = impl_->malloc(nbytes, stream);
  return DataPtr(a->ptr, a, &delete_allocation, impl_->device);
}

void* AsyncAllocator::raw_alloc(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> g(impl_->mutex);
  return impl_->malloc(nbytes, stream)->ptr;
}

void AsyncAllocator::raw_free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> g(impl_->mutex);
  impl_->free(impl_->find(ptr, "raw_free"));
}

void AsyncAllocator::record_stream(void* ptr, StreamId stream) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> g(impl_->mutex);
  Impl::Allocation* a = impl_->find(ptr, "record_stream");
  // Work on the allocation stream is ordered before the free already.
  if (stream != a->stream) a->used_on.insert(stream);
}

void AsyncAllocator::empty_cache() {
  std::lock_guard<std::mutex> g(impl_->mutex);
  DeviceGuard guard(impl_->index);
  impl_->trim();
}

alloc::MemoryStats AsyncAllocator::stats() const {
  std::lock_guard<std::mutex> g(impl_->mutex);
  return impl_->stats();
}

void AsyncAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> g(impl_->mutex);
  impl_->counted.for_each_array([](alloc::StatArray& a) {
    for (alloc::Stat& s : a.s) s.peak = s.current;
  });
  // The only value the driver accepts for a high watermark: 0 resets it to the current value.
  uint64_t zero = 0;
  ANATOMY_CUDA_CHECK(cudaMemPoolSetAttribute(impl_->pool, cudaMemPoolAttrReservedMemHigh, &zero));
  ANATOMY_CUDA_CHECK(cudaMemPoolSetAttribute(impl_->pool, cudaMemPoolAttrUsedMemHigh, &zero));
}

std::string AsyncAllocator::memory_summary() const {
  return alloc::format_memory_summary(stats(), fmt::format("device {} (backend:cudaMallocAsync)", impl_->device.str()));
}

Device AsyncAllocator::device() const { return impl_->device; }

void AsyncAllocator::record_memory_history(bool enabled, size_t max_entries) {
  std::lock_guard<std::mutex> g(impl_->mutex);
  const bool was = impl_->history.enabled();
  impl_->history.set(enabled, max_entries);
  // The dispatcher names operators only while some allocator records (dispatch/current_op.h).
  if (enabled && !was) dispatch::add_op_name_listener();
  if (!enabled && was) dispatch::remove_op_name_listener();
}

alloc::MemorySnapshot AsyncAllocator::memory_snapshot() const {
  std::lock_guard<std::mutex> g(impl_->mutex);
  alloc::MemorySnapshot snap;
  snap.device = impl_->device;
  snap.trace = impl_->history.entries();
  snap.trace_max_entries = impl_->history.max_entries();
  snap.stats = impl_->stats();
  snap.allocations.reserve(impl_->live.size());
  for (const auto& [ptr, a] : impl_->live) snap.allocations.push_back({a->ptr, a->size, a->stream, a->op});
  const auto by_address = [](const alloc::AllocationInfo& x, const alloc::AllocationInfo& y) {
    return std::less<void*>()(x.ptr, y.ptr);
  };
  std::sort(snap.allocations.begin(), snap.allocations.end(), by_address);
  return snap;
}

}  // namespace anatomy::cuda
