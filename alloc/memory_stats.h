// MemoryStats: the caching allocator's counters, as PyTorch's torch.cuda.memory_stats() names
// them: each is current / peak / allocated (ever added) / freed (ever removed), for all pools and
// for the small and the large pool.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace anatomy::alloc {

struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;  // total ever added
  int64_t freed = 0;      // total ever removed

  void increase(int64_t amount) {
    current += amount;
    peak = std::max(peak, current);
    allocated += amount;
  }
  void decrease(int64_t amount) {
    current -= amount;
    freed += amount;
  }
};

enum class StatType : int { All = 0, Small = 1, Large = 2 };
inline constexpr int kNumStatTypes = 3;

// One Stat per StatType; index with stat[StatType::Small].
struct StatArray {
  std::array<Stat, kNumStatTypes> s;
  Stat& operator[](StatType t) { return s[static_cast<int>(t)]; }
  const Stat& operator[](StatType t) const { return s[static_cast<int>(t)]; }
};

struct MemoryStats {
  StatArray allocation;              // blocks handed out
  StatArray segment;                 // provider reservations held
  StatArray active;                  // blocks handed out or waiting for their stream events
  StatArray inactive_split;          // free blocks inside segments that are split (fragmentation)
  StatArray allocated_bytes;         // bytes of the blocks handed out (rounded sizes)
  StatArray reserved_bytes;          // bytes reserved from the provider
  StatArray active_bytes;            // bytes of active blocks
  StatArray inactive_split_bytes;    // bytes of inactive split blocks
  StatArray requested_bytes;         // bytes callers asked for (before rounding)
  int64_t num_alloc_retries = 0;     // allocations that had to release the whole cache and retry
  int64_t num_ooms = 0;              // OutOfMemoryErrors thrown
  int64_t num_provider_allocs = 0;   // successful provider reservations (cudaMalloc calls)
  int64_t num_provider_frees = 0;    // provider releases (cudaFree calls)
  int64_t num_provider_maps = 0;     // pages mapped into expandable segments (cuMemMap calls)
  int64_t num_provider_unmaps = 0;   // pages unmapped from them (cuMemUnmap calls)
  int64_t num_sync_all_streams = 0;  // device-wide synchronizations (OOM path, empty_cache)

  // Every StatArray, for code that treats them alike (reset, checks).
  template <typename F>
  void for_each_array(F&& f) {
    for (StatArray* a : {&allocation, &segment, &active, &inactive_split, &allocated_bytes, &reserved_bytes,
                         &active_bytes, &inactive_split_bytes, &requested_bytes}) {
      f(*a);
    }
  }
};

}  // namespace anatomy::alloc
