// Generator: the state of a counter-based (Philox) random stream: a seed and an offset.
//
// Drawing n numbers reserves offsets [offset, offset + n) and advances the offset, so the
// numbers depend only on (seed, offset, element index), never on how the work is split across
// threads or GPU blocks. That is what lets the CPU and CUDA kernels give the same numbers
// (core/philox.h documents the mapping).
#pragma once

#include <atomic>
#include <cstdint>

#include "anatomy/core/device.h"

namespace anatomy {

class Generator {
 public:
  explicit Generator(uint64_t seed = kDefaultSeed) : seed_(seed) {}

  static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default seed

  uint64_t seed() const { return seed_.load(std::memory_order_relaxed); }
  uint64_t offset() const { return offset_.load(std::memory_order_relaxed); }
  // Sets the seed and restarts the stream.
  void manual_seed(uint64_t seed) {
    seed_.store(seed, std::memory_order_relaxed);
    offset_.store(0, std::memory_order_relaxed);
  }
  void set_offset(uint64_t offset) { offset_.store(offset, std::memory_order_relaxed); }
  // Reserves n consecutive counters and returns the first.
  uint64_t reserve(uint64_t n) { return offset_.fetch_add(n, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> seed_;
  std::atomic<uint64_t> offset_{0};
};

// The generator that random factories on a device type use.
Generator& default_generator(DeviceType type);

}  // namespace anatomy
