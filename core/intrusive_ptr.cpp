// Pooled allocation of RefCounted objects (see RefCounted::operator new).
#include "anatomy/core/intrusive_ptr.h"

#include <new>

#include "anatomy/core/thread_block_cache.h"

namespace anatomy {
namespace {

constexpr size_t kGranule = 16;  // operator new's alignment

struct RefCountedPolicy {
  static constexpr int kClasses = static_cast<int>(RefCounted::kPooledMaxBytes / kGranule);
  static constexpr int kPerClass = 32;
  static void release(void* block) { ::operator delete(block); }
};
using Pool = ThreadBlockCache<RefCountedPolicy>;

// The class of a pooled size, or -1. A class's blocks are all allocated at its full size, so any
// request of the class can reuse any of them.
int size_class(size_t size) {
  if (size == 0 || size > RefCounted::kPooledMaxBytes) return -1;
  return static_cast<int>((size + kGranule - 1) / kGranule) - 1;
}

}  // namespace

void* RefCounted::operator new(size_t size) {
  const int c = size_class(size);
  if (c < 0) return ::operator new(size);
  if (void* block = Pool::take(c)) return block;
  return ::operator new(static_cast<size_t>(c + 1) * kGranule);
}

void RefCounted::operator delete(void* p, size_t size) noexcept {
  if (p == nullptr) return;
  const int c = size_class(size);
  if (c < 0) return ::operator delete(p);
  Pool::give(c, p);
}

}  // namespace anatomy
