// Counters that every thread bumps without a locked instruction and any thread can sum: the CPU
// allocator counts live bytes and blocks on each allocation and free, and five atomic
// read-modify-writes per small op cost more than the op's kernel.
//
// Each thread adds into its own block (a relaxed load and store: plain moves, no lock prefix);
// sum() walks the registered blocks under a mutex. A thread's block is folded into the retired
// totals when the thread ends; bumps after that (a static tensor freed at exit) go straight to
// the retired totals, atomically. A free on another thread than the allocation just makes one
// thread's count negative; the sums stay exact.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "anatomy/core/macros.h"

namespace anatomy::alloc {

template <int N, typename Tag>
class ThreadCounters {
 public:
  // Adds deltas[i] to counter i, every counter at once: one look-up of the thread's block.
  static void add(const std::array<int64_t, N>& deltas) {
    if (Block* b = current()) [[likely]] {
#pragma GCC unroll 8
      for (int i = 0; i < N; ++i) {
        b->values[i].store(b->values[i].load(std::memory_order_relaxed) + deltas[i], std::memory_order_relaxed);
      }
      return;
    }
    add_retired(deltas);
  }
  static std::array<int64_t, N> sum() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::array<int64_t, N> out{};
    for (int i = 0; i < N; ++i) out[i] = r.retired[i].load(std::memory_order_relaxed);
    for (const Block* b : r.live) {
      for (int i = 0; i < N; ++i) out[i] += b->values[i].load(std::memory_order_relaxed);
    }
    return out;
  }

 private:
  struct Block {
    std::array<std::atomic<int64_t>, N> values{};
  };
  struct Registry {
    std::mutex mutex;
    std::vector<const Block*> live;
    std::array<std::atomic<int64_t>, N> retired{};
  };
  // Never destroyed: threads may end (and fold their counts) after static destructors ran.
  static Registry& registry() {
    static Registry* r = new Registry;
    return *r;
  }
  struct Owner {
    Block block;
    Owner() {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      r.live.push_back(&block);
    }
    ~Owner() {
      slot_.block = nullptr;
      slot_.gone = true;
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      for (int i = 0; i < N; ++i) r.retired[i].fetch_add(block.values[i].load(), std::memory_order_relaxed);
      r.live.erase(std::find(r.live.begin(), r.live.end(), &block));
    }
  };
  struct Slot {
    Block* block = nullptr;
    bool gone = false;
  };
  static Block* current() {
    Slot& slot = slot_;
    if (slot.block != nullptr || slot.gone) [[likely]]
      return slot.block;
    return first_use();
  }
  // Out of line: the hot path above stays a load and a compare, with no guard to spill for.
  ANATOMY_NOINLINE static Block* first_use() {
    thread_local Owner owner;
    slot_.block = &owner.block;
    return slot_.block;
  }
  ANATOMY_NOINLINE static void add_retired(const std::array<int64_t, N>& deltas) {
    for (int i = 0; i < N; ++i) registry().retired[i].fetch_add(deltas[i], std::memory_order_relaxed);
  }
  static inline thread_local Slot slot_ ANATOMY_TLS_FAST;
};

}  // namespace anatomy::alloc
