// AllocatorMutex: the caching allocator's lock. Every allocate and every free takes it once, and
// it is almost never contended (one thread allocates per device, as a rule), so what matters is
// the uncontended path: one compare-and-swap to lock and a plain store to unlock, inline. A locked
// read-modify-write cost 8-10 ns on a slower GPU machine's host (docs/perf.md), and a cached
// allocate + free pair locks twice, so an unlock without one saves two of the four per pair.
// Contended, a thread spins briefly, then sleeps in the kernel (a futex on Linux), so a thread
// holding the lock through a slow cudaMalloc costs the others no spinning.
//
// Note [Unlocking with a plain store]
// A mutex whose unlock is a read-modify-write (Drepper's three-state futex mutex, glibc's) learns
// atomically whether anyone sleeps. Here unlock stores "unlocked" with release order, then reads
// how many threads sleep and wakes one when any do. On x86 that read may be served before the
// store is visible to other cores, so a waiter that announced itself and found the lock still held
// in that instant can go to sleep with no wake coming. The waiter therefore never sleeps longer
// than kMaxSleep before it looks again: a missed wake costs it at most that long, never a hang.
// In practice the futex call rereads the lock word in the kernel, well after the store has
// drained, and returns at once. Mutual exclusion rests only on the compare-and-swap (acquire) and
// the store (release), which is also what ThreadSanitizer follows.
// A BasicLockable, for std::lock_guard and the unlock / relock of release_lock_on_cudamalloc.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace anatomy::alloc {

class AllocatorMutex {
 public:
  AllocatorMutex() = default;
  AllocatorMutex(const AllocatorMutex&) = delete;
  AllocatorMutex& operator=(const AllocatorMutex&) = delete;

  void lock() {
    if (try_lock()) [[likely]]
      return;
    lock_contended();
  }

  bool try_lock() {
    int seen = kUnlocked;
    return state_.compare_exchange_strong(seen, kLocked, std::memory_order_acquire, std::memory_order_relaxed);
  }

  // Note [Unlocking with a plain store].
  void unlock() {
    state_.store(kUnlocked, std::memory_order_release);
    if (sleepers_.load(std::memory_order_relaxed) != 0) [[unlikely]] {
      wake_one();
    }
  }

  // The longest a waiter sleeps before it looks at the lock again.
  static constexpr std::chrono::microseconds kMaxSleep{200};

 private:
  static constexpr int kUnlocked = 0, kLocked = 1;
  // Compare-and-swap attempts (with a pause between) before a waiter sleeps: a few microseconds,
  // longer than the allocator's cached paths hold the lock.
  static constexpr int kSpins = 200;

  // Out of line: only the rare contended path pays for the spin, the sleep and the wake.
  [[gnu::noinline]] void lock_contended() {
    for (int i = 0; i < kSpins; ++i) {
      // Read before trying: a failing compare-and-swap still takes the line from the holder.
      if (state_.load(std::memory_order_relaxed) == kUnlocked && try_lock()) return;
      cpu_relax();
    }
    for (;;) {
      // Announced before the lock is looked at again, so that an unlock after this look sees it
      // (seq_cst: a full barrier on the waiter's side; Note [Unlocking with a plain store] covers
      // the unlocker's).
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      if (state_.load(std::memory_order_seq_cst) == kLocked) sleep_while_locked();
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
      if (try_lock()) return;
    }
  }

  // Sleeps while the lock word is kLocked, for at most kMaxSleep. Returns at once when it is no
  // longer kLocked, and on a wake, the timeout or a signal: the caller looks again in every case.
  void sleep_while_locked() {
#if defined(__linux__)
    constexpr auto kNanos = std::chrono::duration_cast<std::chrono::nanoseconds>(kMaxSleep).count();
    timespec timeout{};
    timeout.tv_sec = static_cast<time_t>(kNanos / 1000000000);
    timeout.tv_nsec = static_cast<long>(kNanos % 1000000000);
    syscall(SYS_futex, futex_word(), FUTEX_WAIT_PRIVATE, kLocked, &timeout, nullptr, 0);
#else
    std::this_thread::sleep_for(kMaxSleep);
#endif
  }

  [[gnu::noinline]] void wake_one() {
#if defined(__linux__)
    syscall(SYS_futex, futex_word(), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
#endif
  }

  // The futex calls treat the atomic as the int it wraps.
  static_assert(sizeof(std::atomic<int>) == sizeof(int) && std::atomic<int>::is_always_lock_free);
  int* futex_word() { return reinterpret_cast<int*>(&state_); }

  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
  }

  std::atomic<int> state_{kUnlocked};
  std::atomic<int> sleepers_{0};  // threads in sleep_while_locked, or about to be
};

}  // namespace anatomy::alloc
