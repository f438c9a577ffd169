// The caching allocator's size classes (caching_allocator.h: round_size, allocation_size) and
// its conf: the checks of the constructor and set_conf, and what the block pool keeps of it.
#include <algorithm>
#include <bit>

#include "anatomy/alloc/caching_allocator_impl.h"
#include "anatomy/core/error.h"

namespace anatomy::alloc {
namespace {

// The next multiple of 2^floor(log2 size) / divisions above `size` (1200 MB, 4 -> 1280 MB).
size_t roundup_power2_next_division(size_t size, size_t divisions) {
  if (std::has_single_bit(size)) return size;
  size_t power2_floor = std::bit_floor(size);
  size_t step = power2_floor / divisions;
  if (step == 0) return power2_floor << 1;
  size_t floor = size & ~(step - 1);
  return floor == size ? size : floor + step;
}

}  // namespace

size_t round_size(size_t size, const AllocConf& conf) {
  if (size < kMinBlockSize) return kMinBlockSize;
  size_t divisions = conf.divisions_for(size);
  if (divisions > 1 && size > kMinBlockSize * divisions) return roundup_power2_next_division(size, divisions);
  return (size + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t allocation_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

void check_conf(const AllocConf& conf, const MemoryProvider& provider) {
  ANATOMY_CHECK(!conf.expandable_segments || provider.supports_virtual_memory(), NotImplementedError,
                "caching allocator: expandable_segments:True is not supported by the memory provider of {} "
                "(it has no virtual memory management); use expandable_segments:False",
                provider.device().str());
  ANATOMY_CHECK(
      conf.backend == AllocBackend::Native, NotImplementedError,
      "caching allocator: backend:cudaMallocAsync is not a policy of this allocator (it is the native "
      "backend); CUDA devices serve that setting with cuda::AsyncAllocator (backends/cuda/memory/async_allocator.h)");
}

void CachingAllocator::Impl::set_conf(const AllocConf& c) {
  conf = c;
  plain_rounding = std::all_of(c.roundup_power2_divisions.begin(), c.roundup_power2_divisions.end(),
                               [](size_t d) { return d <= 1; });
}

}  // namespace anatomy::alloc
