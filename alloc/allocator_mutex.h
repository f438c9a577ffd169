// AllocatorMutex: the caching allocator's lock. Every allocate and every free takes it once, and
// it is almost never contended (one thread allocates per device, as a rule), so what matters is
// the uncontended path: one compare-and-swap to lock and one fetch-sub to unlock, inline, where
// std::mutex calls into pthread_mutex_lock and pthread_mutex_unlock (about 55 instructions per
// lock and unlock, against about 10). Contended, a thread sleeps in the kernel as with std::mutex
// (C++20 atomic wait, a futex on Linux), so a thread holding the lock through a slow cudaMalloc
// costs the others no spinning.
//
// The protocol is Drepper's "Futexes Are Tricky" mutex: the state is 0 (unlocked), 1 (locked, no
// waiter) or 2 (locked, maybe waiters). A locker that finds it held sets 2 and sleeps while it
// stays 2; an unlock that finds 2 sets 0 and wakes one sleeper, which takes the lock as 2 again
// (it cannot know whether others still wait). Acquire on taking it and release on giving it back
// order the allocator's state between threads, which is also what ThreadSanitizer follows.
// A BasicLockable, for std::lock_guard and the unlock / relock of release_lock_on_cudamalloc.
#pragma once

#include <atomic>

namespace anatomy::alloc {

class AllocatorMutex {
 public:
  AllocatorMutex() = default;
  AllocatorMutex(const AllocatorMutex&) = delete;
  AllocatorMutex& operator=(const AllocatorMutex&) = delete;

  void lock() {
    int seen = kUnlocked;
    if (state_.compare_exchange_strong(seen, kLocked, std::memory_order_acquire, std::memory_order_relaxed)) [[likely]]
      return;
    lock_contended(seen);
  }

  void unlock() {
    if (state_.fetch_sub(1, std::memory_order_release) != kLocked) [[unlikely]] {
      wake_one();
    }
  }

 private:
  static constexpr int kUnlocked = 0, kLocked = 1, kContended = 2;

  // Out of line: only the rare contended path pays for the wait and the wake.
  [[gnu::noinline]] void lock_contended(int seen) {
    if (seen != kContended) seen = state_.exchange(kContended, std::memory_order_acquire);
    while (seen != kUnlocked) {
      state_.wait(kContended, std::memory_order_relaxed);
      seen = state_.exchange(kContended, std::memory_order_acquire);
    }
  }

  [[gnu::noinline]] void wake_one() {
    state_.store(kUnlocked, std::memory_order_release);
    state_.notify_one();
  }

  std::atomic<int> state_{kUnlocked};
};

}  // namespace anatomy::alloc
