// AllocatorMutex, the caching allocator's lock: mutual exclusion under contention (threads that
// find it held sleep and are woken), and a waiter that gets in only once the holder unlocks.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "anatomy/alloc/allocator_mutex.h"

using anatomy::alloc::AllocatorMutex;

TEST_CASE("allocator mutex: contended increments are exact") {
  AllocatorMutex mutex;
  int64_t counter = 0;  // plain: only the lock orders the threads' updates
  constexpr int kThreads = 4, kEach = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        std::lock_guard<AllocatorMutex> g(mutex);
        counter = counter + 1;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(counter == int64_t{kThreads} * kEach);
}

TEST_CASE("allocator mutex: a waiter sleeps until the holder unlocks") {
  AllocatorMutex mutex;
  std::atomic<bool> got_in{false};
  mutex.lock();
  std::thread waiter([&] {
    std::lock_guard<AllocatorMutex> g(mutex);
    got_in = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(got_in.load());
  mutex.unlock();
  waiter.join();
  CHECK(got_in.load());
  mutex.lock();  // free again after the waiter's unlock
  mutex.unlock();
}
