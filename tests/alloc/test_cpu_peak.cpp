// The CPU allocator's reserved bytes and their peak: exact, across threads, and reset on demand.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {
constexpr int64_t kMiB = 1 << 20;
// A large block as malloc gives it: the payload, the header line and the 48 bytes that align it
// inside malloc's 16-byte-aligned chunk (Note [Large CPU blocks from plain malloc]).
constexpr int64_t kLargeOverhead = 64 + 48;
int64_t reserved() { return alloc::cpu_allocator_stats().reserved_bytes; }
int64_t peak() { return alloc::cpu_allocator_stats().peak_bytes; }
}  // namespace

TEST_CASE("cpu allocator: a large block is reserved while it lives, and the peak remembers it") {
  alloc::reset_cpu_peak_stats();
  const int64_t start = reserved();
  CHECK(peak() == start);
  {
    Tensor big = empty({kMiB}, TensorOptions().dtype(DType::UInt8));
    // The payload (a multiple of 64 bytes) and the header line.
    CHECK(reserved() == start + kMiB + kLargeOverhead);
  }
  CHECK(reserved() == start);
  CHECK(peak() == start + kMiB + kLargeOverhead);
  alloc::reset_cpu_peak_stats();
  CHECK(peak() == start);
}

TEST_CASE("cpu allocator: the peak is exact when threads hold blocks at the same time") {
  alloc::reset_cpu_peak_stats();
  const int64_t start = reserved();
  std::atomic<int> holding{0};
  std::atomic<bool> release{false};
  auto worker = [&] {
    Tensor t = empty({kMiB}, TensorOptions().dtype(DType::UInt8));
    holding.fetch_add(1);
    while (!release.load()) std::this_thread::yield();
  };
  std::thread a(worker), b(worker);
  while (holding.load() < 2) std::this_thread::yield();
  CHECK(reserved() == start + 2 * (kMiB + kLargeOverhead));
  release.store(true);
  a.join();
  b.join();
  // Freed on their own threads, exactly.
  CHECK(reserved() == start);
  CHECK(peak() >= start + 2 * (kMiB + kLargeOverhead));
}
