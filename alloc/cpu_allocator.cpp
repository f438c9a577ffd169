// The CPU allocator (see cpu_allocator.h); registered for DeviceType::CPU at load time.
#include "anatomy/alloc/cpu_allocator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <new>

#include "anatomy/core/error.h"

namespace anatomy::alloc {
namespace {

std::atomic<int64_t> g_live_bytes{0}, g_live_blocks{0}, g_total_allocs{0};

// Small blocks (up to 1 KiB of payload: scalars, tiny tensors) are kept on a per-thread free
// list by size class instead of going back to malloc: an aligned malloc/free pair costs more
// than a whole small element-wise op. Each thread keeps at most kPerClass blocks of each of the
// kClasses 64-byte classes (64 KiB in all), freed when the thread ends.
constexpr size_t kSmallMax = 1024;
constexpr int kClasses = static_cast<int>(kSmallMax / kCpuAlignment);
constexpr int kPerClass = 32;

// The payload size class of a small request, or -1.
int small_class(size_t nbytes) {
  if (nbytes > kSmallMax) return -1;
  return static_cast<int>((std::max<size_t>(nbytes, 1) + kCpuAlignment - 1) / kCpuAlignment) - 1;
}

// Trivially destructible, so it can still be read after the cache itself is gone (a tensor
// released by a static destructor at exit): then blocks go straight back to malloc.
thread_local bool t_cache_gone = false;

struct SmallBlockCache {
  std::array<std::array<void*, kPerClass>, kClasses> blocks{};
  std::array<int, kClasses> count{};
  ~SmallBlockCache() {
    t_cache_gone = true;
    for (int c = 0; c < kClasses; ++c) {
      for (int i = 0; i < count[c]; ++i) std::free(blocks[c][i]);
    }
  }
};
thread_local SmallBlockCache t_cache;

// Each block starts with one aligned header line that records the requested size, so the free
// can update the counters without a second allocation. The context is the block's base.
void free_cpu(void* base) {
  size_t nbytes = *static_cast<size_t*>(base);
  g_live_bytes.fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
  g_live_blocks.fetch_sub(1, std::memory_order_relaxed);
  const int c = small_class(nbytes);
  if (c >= 0 && !t_cache_gone && t_cache.count[c] < kPerClass) {
    t_cache.blocks[c][t_cache.count[c]++] = base;
    return;
  }
  std::free(base);
}

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    // aligned_alloc wants a multiple of the alignment; the extra line is the header, which also
    // gives 0-byte requests a real, distinct pointer.
    ANATOMY_CHECK(nbytes <= (size_t{1} << 62), OutOfMemoryError, "cpu allocator: {} bytes is too large", nbytes);
    const int c = small_class(nbytes);
    void* base = nullptr;
    if (c >= 0 && !t_cache_gone && t_cache.count[c] > 0) {
      base = t_cache.blocks[c][--t_cache.count[c]];
    } else {
      // A small request gets its class's full size, so the block can serve the class later.
      const size_t payload = c >= 0 ? static_cast<size_t>(c + 1) * kCpuAlignment
                                    : (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
      base = std::aligned_alloc(kCpuAlignment, payload + kCpuAlignment);
    }
    ANATOMY_CHECK(base != nullptr, OutOfMemoryError,
                  "cpu allocator: out of memory allocating {} bytes ({} bytes live in {} blocks)", nbytes,
                  g_live_bytes.load(), g_live_blocks.load());
    g_live_bytes.fetch_add(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
    g_live_blocks.fetch_add(1, std::memory_order_relaxed);
    g_total_allocs.fetch_add(1, std::memory_order_relaxed);
    *static_cast<size_t*>(base) = nbytes;
    return DataPtr(static_cast<char*>(base) + kCpuAlignment, base, &free_cpu, Device(DeviceType::CPU));
  }
};

const bool registered = [] {
  set_allocator(DeviceType::CPU, cpu_allocator());
  return true;
}();

}  // namespace

Allocator* cpu_allocator() {
  static CpuAllocator a;
  return &a;
}

CpuAllocatorStats cpu_allocator_stats() {
  return {g_live_bytes.load(), g_live_blocks.load(), g_total_allocs.load()};
}

}  // namespace anatomy::alloc
