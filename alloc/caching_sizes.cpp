// The size classes of the caching allocator's blocks and segments (caching_allocator.h:
// round_size, allocation_size).
#include <bit>

#include "anatomy/alloc/caching_allocator.h"

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

}  // namespace anatomy::alloc
