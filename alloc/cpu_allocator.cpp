// The CPU allocator (see cpu_allocator.h); registered for DeviceType::CPU at load time.
#include "anatomy/alloc/cpu_allocator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "anatomy/alloc/thread_counters.h"
#include "anatomy/core/error.h"
#include "anatomy/core/storage.h"
#include "anatomy/core/thread_block_cache.h"

namespace anatomy::alloc {
namespace {

enum Counter { kLiveBytes, kLiveBlocks, kTotalAllocs };
using Counters = ThreadCounters<3, struct CpuAllocatorTag>;

// Bytes held from the system, and their peak. Per-thread counters cannot give an exact peak (the
// sum at its highest is never observed), so these are global atomics, touched only where a block
// comes from malloc or goes back to free: a block recycled through the per-thread free lists
// (every small op's output) stays reserved and costs nothing here, which keeps the tiny-op path
// free of locked instructions. Cached blocks are counted as reserved for the same reason, and
// exactly: a block leaves the count only when it is freed to the system.
std::atomic<int64_t> g_reserved_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

void add_reserved(int64_t delta) {
  const int64_t now = g_reserved_bytes.fetch_add(delta, std::memory_order_relaxed) + delta;
  if (delta <= 0) return;
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !g_peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// A block's size as taken from malloc: its payload rounded to the alignment (a small request's
// whole class) plus the header line, and for a large block the slack that aligns it.
size_t block_bytes(size_t nbytes);

// Small blocks (up to 1 KiB of payload: scalars, tiny tensors) are kept on a per-thread free
// list by size class (core/thread_block_cache.h) instead of going back to malloc: an aligned
// malloc/free pair costs more than a whole small element-wise op. Each thread keeps at most
// kPerClass blocks of each of the kClasses 64-byte classes (64 KiB in all).
constexpr size_t kSmallMax = 1024;

struct SmallBlockPolicy {
  static constexpr int kClasses = static_cast<int>(kSmallMax / kCpuAlignment);
  static constexpr int kPerClass = 32;
  static void release(void* block) {
    add_reserved(-static_cast<int64_t>(block_bytes(*static_cast<size_t*>(block))));
    std::free(block);
  }
};
using SmallBlocks = ThreadBlockCache<SmallBlockPolicy>;

// The payload size class of a small request, or -1.
int small_class(size_t nbytes) {
  if (nbytes > kSmallMax) return -1;
  return static_cast<int>((std::max<size_t>(nbytes, 1) + kCpuAlignment - 1) / kCpuAlignment) - 1;
}

// Note [Large CPU blocks from plain malloc]
// glibc's aligned allocations (aligned_alloc, posix_memalign) cut the aligned block out of a
// larger chunk. In the pattern of every loop that makes a new result while the last one is still
// alive (`out = a + b`, then the old `out` freed), the chunk a freed block leaves is never the
// one the next aligned request fits, so the heap grows into fresh pages each time and is trimmed
// back later: every large result paid a page fault per 4 KiB. A 1 MiB clone in such a loop took
// 240 us against 33 us, a 16 MiB one 5.2 ms against 0.8 ms (2983 page faults per call against
// 123; a C loop of malloc and memset on the dev VM). So a large block is a plain malloc of the
// payload, the header line and 48 bytes of slack (malloc aligns to 16), aligned inside it; its
// header records malloc's pointer for the free. Small blocks keep aligned_alloc: they are
// recycled through the free lists above, and their class sizes are exact multiples of the line.
constexpr size_t kMallocAlignment = 16;
constexpr size_t kLargeSlack = kCpuAlignment - kMallocAlignment;

size_t block_bytes(size_t nbytes) {
  const int c = small_class(nbytes);
  if (c >= 0) return static_cast<size_t>(c + 1) * kCpuAlignment + kCpuAlignment;
  return (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment + kCpuAlignment + kLargeSlack;
}

// The header line of a block: the requested size, and for a large block where malloc put it.
struct BlockHeader {
  size_t nbytes;
  void* malloc_base;
};
static_assert(sizeof(BlockHeader) <= kCpuAlignment);

// A large block: its header line aligned inside a plain malloc (Note [Large CPU blocks from plain
// malloc]); nullptr when malloc fails.
void* allocate_large(size_t bytes) {
  void* raw = std::malloc(bytes);
  if (raw == nullptr) return nullptr;
  const auto a = reinterpret_cast<uintptr_t>(raw);
  auto* base = reinterpret_cast<BlockHeader*>((a + kCpuAlignment - 1) & ~(uintptr_t{kCpuAlignment} - 1));
  base->malloc_base = raw;
  return base;
}

// Each block starts with one aligned header line that records the requested size, so the free
// can update the counters without a second allocation. The context is the block's base.
void free_cpu(void* base) {
  const auto* header = static_cast<const BlockHeader*>(base);
  const size_t nbytes = header->nbytes;
  Counters::add({-static_cast<int64_t>(nbytes), -1, 0});
  const int c = small_class(nbytes);
  if (c >= 0) return SmallBlocks::give(c, base);  // a small block's header has no malloc_base
  add_reserved(-static_cast<int64_t>(block_bytes(nbytes)));
  std::free(header->malloc_base);
}

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    // aligned_alloc wants a multiple of the alignment; the extra line is the header, which also
    // gives 0-byte requests a real, distinct pointer. Large blocks: allocate_large.
    ANATOMY_CHECK(nbytes <= (size_t{1} << 62), OutOfMemoryError, "cpu allocator: {} bytes is too large", nbytes);
    const int c = small_class(nbytes);
    void* base = c >= 0 ? SmallBlocks::take(c) : nullptr;
    if (base == nullptr) {
      // A small request gets its class's full size, so the block can serve the class later.
      const size_t bytes = block_bytes(nbytes);
      base = c >= 0 ? std::aligned_alloc(kCpuAlignment, bytes) : allocate_large(bytes);
      if (base != nullptr) add_reserved(static_cast<int64_t>(bytes));
    }
    if (base == nullptr) {
      const CpuAllocatorStats stats = cpu_allocator_stats();
      ANATOMY_THROW(OutOfMemoryError, "cpu allocator: out of memory allocating {} bytes ({} bytes live in {} blocks)",
                    nbytes, stats.live_bytes, stats.live_blocks);
    }
    Counters::add({static_cast<int64_t>(nbytes), 1, 1});
    *static_cast<size_t*>(base) = nbytes;
    return DataPtr(static_cast<char*>(base) + kCpuAlignment, base, &free_cpu, Device(DeviceType::CPU));
  }

  Storage make_storage(size_t nbytes) override {
    if (kInlineMax > 0 && nbytes <= kInlineMax) [[likely]] {
      if (nbytes <= 64) return Storage::make_as<InlineStorage<64>>(nbytes, this);
      if (nbytes <= 128) return Storage::make_as<InlineStorage<128>>(nbytes, this);
      return Storage::make_as<InlineStorage<kInlineMax>>(nbytes, this);
    }
    return Allocator::make_storage(nbytes);
  }

 private:
  // Note [Small CPU storage inline]
  // A new tensor of up to kInlineMax bytes (a scalar, a bias, the 1-element operands of a tiny
  // op) keeps its bytes inside its StorageImpl: one pooled object (core/intrusive_ptr.h) instead
  // of a StorageImpl and a block from the lists above, which saves a take and a give of each
  // kind on every small op. The bytes are aligned as every CPU block is (kCpuAlignment), from
  // the padding the object carries for that. They count as live bytes and blocks, as any block
  // handed out; not as reserved bytes: the object pool holds them, as it holds the TensorImpls.
  // Under AddressSanitizer nothing is placed inline, so that an overrun of a small tensor lands
  // outside its block and is reported.
  template <size_t N>
  class InlineStorage final : public StorageImpl {
   public:
    InlineStorage(size_t nbytes, Allocator* allocator)
        : StorageImpl(DataPtr(aligned(bytes_), Device(DeviceType::CPU)), nbytes, allocator) {
      Counters::add({static_cast<int64_t>(nbytes), 1, 1});
    }
    ~InlineStorage() override { Counters::add({-static_cast<int64_t>(this->nbytes()), -1, 0}); }

   private:
    static void* aligned(unsigned char* p) {
      const auto a = reinterpret_cast<uintptr_t>(p);
      return reinterpret_cast<void*>((a + kCpuAlignment - 1) & ~(uintptr_t{kCpuAlignment} - 1));
    }
    // operator new aligns to 16 bytes; the rest of the alignment comes out of the padding.
    unsigned char bytes_[N + kCpuAlignment - 16];
  };
#if defined(__SANITIZE_ADDRESS__)
  static constexpr size_t kInlineMax = 0;
#else
  static constexpr size_t kInlineMax = 256;
#endif
  static_assert(sizeof(InlineStorage<kInlineMax>) <= RefCounted::kPooledMaxBytes, "inline storage is pooled");
};

const bool registered = [] {
  set_allocator(DeviceType::CPU, cpu_allocator());
  return true;
}();

}  // namespace

Allocator* cpu_allocator() {
  static CpuAllocator a;
  return &a;
}

CpuAllocatorStats cpu_allocator_stats() {
  const auto sums = Counters::sum();
  return {sums[kLiveBytes], sums[kLiveBlocks], sums[kTotalAllocs], g_reserved_bytes.load(std::memory_order_relaxed),
          g_peak_bytes.load(std::memory_order_relaxed)};
}

void reset_cpu_peak_stats() {
  g_peak_bytes.store(g_reserved_bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

}  // namespace anatomy::alloc
