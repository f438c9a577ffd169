// The streaming-store threshold (Note [Streaming stores for large outputs]).
#include "anatomy/backends/cpu/streaming_store.h"

#include <atomic>

namespace anatomy::cpu {
namespace {

std::atomic<size_t> g_threshold{size_t{16} << 20};

}  // namespace

size_t streaming_store_threshold() { return g_threshold.load(std::memory_order_relaxed); }
void set_streaming_store_threshold(size_t bytes) { g_threshold.store(bytes, std::memory_order_relaxed); }

}  // namespace anatomy::cpu
