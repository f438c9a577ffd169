// The streaming-store threshold (Note [Streaming stores for large outputs]).
#include "anatomy/backends/cpu/streaming_store.h"

#include <atomic>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace anatomy::cpu {
namespace {

std::atomic<size_t> g_threshold{size_t{16} << 20};

}  // namespace

size_t streaming_store_threshold() { return g_threshold.load(std::memory_order_relaxed); }

bool page_resident(const void* p) {
#if defined(__linux__)
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  unsigned char resident = 1;
  void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) & ~(page - 1));
  if (mincore(start, 1, &resident) != 0) return true;
  return (resident & 1) != 0;
#else
  (void)p;
  return true;
#endif
}
void set_streaming_store_threshold(size_t bytes) { g_threshold.store(bytes, std::memory_order_relaxed); }

}  // namespace anatomy::cpu
