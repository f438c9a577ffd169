// Small CPU tensors keep their bytes inside their storage object (Note [Small CPU storage
// inline]): aligned as every CPU block, counted as live bytes and blocks, never as reserved.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "anatomy/alloc/cpu_allocator.h"
#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {
const alloc::CpuAllocatorStats stats() { return alloc::cpu_allocator_stats(); }
bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % alloc::kCpuAlignment == 0; }
// Inline bytes belong to the storage object: its DataPtr owns nothing (no deleter) and points
// into the object. A block from the allocator has a deleter.
bool inside_storage_object(const Tensor& t) {
  const auto* object = reinterpret_cast<const char*>(t.storage().get());
  const auto* data = static_cast<const char*>(t.storage()->data());
  const bool owns_nothing = t.storage()->data_ptr().deleter() == nullptr;
  if (owns_nothing) CHECK((data > object && data < object + RefCounted::kPooledMaxBytes));
  return owns_nothing;
}
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kInline = false;
#else
constexpr bool kInline = true;
#endif
}  // namespace

TEST_CASE("cpu allocator: tensors of up to 256 bytes live in their storage, aligned and counted") {
  for (int64_t bytes : {0, 1, 4, 63, 64, 65, 128, 129, 200, 256, 257, 1024}) {
    CAPTURE(bytes);
    const auto before = stats();
    {
      Tensor t = empty({bytes}, TensorOptions().dtype(DType::UInt8));
      CHECK(aligned(t.data_ptr()));
      CHECK(t.storage()->nbytes() == static_cast<size_t>(bytes));
      CHECK(t.storage()->allocator() == alloc::cpu_allocator());
      CHECK(inside_storage_object(t) == (kInline && bytes <= 256));
      const auto during = stats();
      CHECK(during.live_bytes == before.live_bytes + bytes);
      CHECK(during.live_blocks == before.live_blocks + 1);
      CHECK(during.total_allocs == before.total_allocs + 1);
      if (inside_storage_object(t)) CHECK(during.reserved_bytes == before.reserved_bytes);
      // Every byte is usable, and writing them all leaves the storage object intact.
      if (bytes > 0) std::memset(t.data_ptr(), 0xab, static_cast<size_t>(bytes));
      CHECK(t.storage()->nbytes() == static_cast<size_t>(bytes));
      CHECK(t.storage().use_count() == 1);
    }
    CHECK(stats().live_bytes == before.live_bytes);
    CHECK(stats().live_blocks == before.live_blocks);
  }
}

TEST_CASE("cpu allocator: an inline storage outlives its first tensor while a view holds it") {
  const auto before = stats();
  Tensor view;
  {
    Tensor t = arange(8, TensorOptions().dtype(DType::Float32));
    view = t.slice(0, 2, 6);
  }
  CHECK(stats().live_blocks == before.live_blocks + 1);
  CHECK(view.sum().item<double>() == 2 + 3 + 4 + 5);
  view = Tensor();
  CHECK(stats().live_bytes == before.live_bytes);
  CHECK(stats().live_blocks == before.live_blocks);
}

TEST_CASE("cpu allocator: many small tensors alive at once keep distinct, intact bytes") {
  std::vector<Tensor> held;
  for (int i = 0; i < 300; ++i)
    held.push_back(full({1 + i % 64}, static_cast<double>(i), TensorOptions().dtype(DType::Float32)));
  for (int i = 0; i < 300; ++i) {
    CAPTURE(i);
    CHECK(aligned(held[i].data_ptr()));
    CHECK(held[i].min().item<double>() == i);
    CHECK(held[i].max().item<double>() == i);
  }
}
