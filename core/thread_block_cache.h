// Per-thread free lists of fixed-size memory blocks, by size class. Every operator call makes a
// few small heap objects (a TensorImpl, its Storage and version counter, the output's bytes) and
// frees as many; taking them from a list the calling thread owns costs a few instructions,
// against a few hundred for a malloc/free pair.
//
// Note [Thread block cache lifetime]
// Each thread's cache is made on its first use and emptied when the thread ends (its blocks go
// back through Policy::release). A block freed after that (a tensor held by a static object that
// is destroyed at exit) is released at once: the trivially destructible `Slot` records that the
// cache is gone, and it can still be read then. A block may be freed on a thread other than the
// one that took it; it then joins that thread's lists, which is fine because every block of a
// class has the same size and comes from the same Policy::acquire.
//
// Under AddressSanitizer the cache keeps nothing, so that a use after free of a recycled block is
// still reported.
//
// Policy supplies: kClasses, kPerClass (the most blocks a thread keeps per class),
// `static void release(void*)`.
#pragma once

#include <array>
#include <memory>

#include "anatomy/core/macros.h"

namespace anatomy {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kThreadBlockCacheEnabled = false;
#else
inline constexpr bool kThreadBlockCacheEnabled = true;
#endif

template <typename Policy>
class ThreadBlockCache {
 public:
  // A cached block of class `c`, or nullptr (the caller then allocates one).
  static void* take(int c) {
    ThreadBlockCache* cache = current();
    if (cache == nullptr || cache->count_[c] == 0) return nullptr;
    return cache->blocks_[c][--cache->count_[c]];
  }
  // Keeps `block` of class `c` for later, or releases it when the list is full or gone.
  static void give(int c, void* block) {
    ThreadBlockCache* cache = current();
    if (cache != nullptr && cache->count_[c] < Policy::kPerClass) {
      cache->blocks_[c][cache->count_[c]++] = block;
      return;
    }
    Policy::release(block);
  }

  ~ThreadBlockCache() {
    slot_.gone = true;
    slot_.cache = nullptr;
    for (int c = 0; c < Policy::kClasses; ++c) {
      for (int i = 0; i < count_[c]; ++i) Policy::release(blocks_[c][i]);
    }
  }

 private:
  struct Slot {
    ThreadBlockCache* cache = nullptr;
    bool gone = false;
  };
  // One thread-local access on the hot path; the guarded thread_local object is touched only
  // the first time.
  static ThreadBlockCache* current() {
    if constexpr (!kThreadBlockCacheEnabled) return nullptr;
    Slot& slot = slot_;
    if (slot.cache != nullptr || slot.gone) [[likely]]
      return slot.cache;
    return first_use();
  }
  // Out of line: the hot path above stays a load and a compare, with no guard to spill for.
  //
  // The cache (kilobytes of lists) is on the heap, owned by a thread-local pointer: a thread_local
  // object that size would be part of the library's static TLS block, which the initial-exec
  // accesses (ANATOMY_TLS_FAST) require to fit in the few hundred bytes glibc keeps for libraries
  // loaded by dlopen, as the Python module loads libanatomy ("cannot allocate memory in static
  // TLS block" otherwise).
  ANATOMY_NOINLINE static ThreadBlockCache* first_use() {
    thread_local std::unique_ptr<ThreadBlockCache> owner(new ThreadBlockCache);
    slot_.cache = owner.get();
    return slot_.cache;
  }

  static inline thread_local Slot slot_ ANATOMY_TLS_FAST;
  std::array<std::array<void*, Policy::kPerClass>, Policy::kClasses> blocks_{};
  std::array<int, Policy::kClasses> count_{};
};

}  // namespace anatomy
