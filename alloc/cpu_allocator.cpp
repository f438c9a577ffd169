// The CPU allocator (see cpu_allocator.h); registered for DeviceType::CPU at load time.
#include "anatomy/alloc/cpu_allocator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <new>

#include "anatomy/core/error.h"
#include "anatomy/alloc/thread_counters.h"
#include "anatomy/core/thread_block_cache.h"

namespace anatomy::alloc {
namespace {

enum Counter { kLiveBytes, kLiveBlocks, kTotalAllocs };
using Counters = ThreadCounters<3, struct CpuAllocatorTag>;

// Small blocks (up to 1 KiB of payload: scalars, tiny tensors) are kept on a per-thread free
// list by size class (core/thread_block_cache.h) instead of going back to malloc: an aligned
// malloc/free pair costs more than a whole small element-wise op. Each thread keeps at most
// kPerClass blocks of each of the kClasses 64-byte classes (64 KiB in all).
constexpr size_t kSmallMax = 1024;

struct SmallBlockPolicy {
  static constexpr int kClasses = static_cast<int>(kSmallMax / kCpuAlignment);
  static constexpr int kPerClass = 32;
  static void release(void* block) { std::free(block); }
};
using SmallBlocks = ThreadBlockCache<SmallBlockPolicy>;

// The payload size class of a small request, or -1.
int small_class(size_t nbytes) {
  if (nbytes > kSmallMax) return -1;
  return static_cast<int>((std::max<size_t>(nbytes, 1) + kCpuAlignment - 1) / kCpuAlignment) - 1;
}

// Each block starts with one aligned header line that records the requested size, so the free
// can update the counters without a second allocation. The context is the block's base.
void free_cpu(void* base) {
  size_t nbytes = *static_cast<size_t*>(base);
  Counters::add(kLiveBytes, -static_cast<int64_t>(nbytes));
  Counters::add(kLiveBlocks, -1);
  const int c = small_class(nbytes);
  if (c >= 0) return SmallBlocks::give(c, base);
  std::free(base);
}

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    // aligned_alloc wants a multiple of the alignment; the extra line is the header, which also
    // gives 0-byte requests a real, distinct pointer.
    ANATOMY_CHECK(nbytes <= (size_t{1} << 62), OutOfMemoryError, "cpu allocator: {} bytes is too large", nbytes);
    const int c = small_class(nbytes);
    void* base = c >= 0 ? SmallBlocks::take(c) : nullptr;
    if (base == nullptr) {
      // A small request gets its class's full size, so the block can serve the class later.
      const size_t payload = c >= 0 ? static_cast<size_t>(c + 1) * kCpuAlignment
                                    : (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
      base = std::aligned_alloc(kCpuAlignment, payload + kCpuAlignment);
    }
    if (base == nullptr) {
      const CpuAllocatorStats stats = cpu_allocator_stats();
      ANATOMY_THROW(OutOfMemoryError, "cpu allocator: out of memory allocating {} bytes ({} bytes live in {} blocks)",
                    nbytes, stats.live_bytes, stats.live_blocks);
    }
    Counters::add(kLiveBytes, static_cast<int64_t>(nbytes));
    Counters::add(kLiveBlocks, 1);
    Counters::add(kTotalAllocs, 1);
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
  const auto sums = Counters::sum();
  return {sums[kLiveBytes], sums[kLiveBlocks], sums[kTotalAllocs]};
}

}  // namespace anatomy::alloc
