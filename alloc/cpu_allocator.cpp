// The CPU allocator (see cpu_allocator.h); registered for DeviceType::CPU at load time.
#include "anatomy/alloc/cpu_allocator.h"

#include <atomic>
#include <cstdlib>
#include <new>

#include "anatomy/core/error.h"

namespace anatomy::alloc {
namespace {

std::atomic<int64_t> g_live_bytes{0}, g_live_blocks{0}, g_total_allocs{0};

// Each block starts with one aligned header line that records the requested size, so the free
// can update the counters without a second allocation. The context is the block's base.
void free_cpu(void* base) {
  size_t nbytes = *static_cast<size_t*>(base);
  std::free(base);
  g_live_bytes.fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
  g_live_blocks.fetch_sub(1, std::memory_order_relaxed);
}

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    // aligned_alloc wants a multiple of the alignment; the extra line is the header, which also
    // gives 0-byte requests a real, distinct pointer.
    ANATOMY_CHECK(nbytes <= (size_t{1} << 62), OutOfMemoryError, "cpu allocator: {} bytes is too large", nbytes);
    size_t rounded = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment + kCpuAlignment;
    void* base = std::aligned_alloc(kCpuAlignment, rounded);
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
