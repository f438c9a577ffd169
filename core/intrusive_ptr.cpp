// Pooled allocation of RefCounted objects (see RefCounted::operator new): the paths that reach
// the global allocator.
#include "anatomy/core/intrusive_ptr.h"

#include <new>

namespace anatomy {

void detail::RefCountedPoolPolicy::release(void* block) { ::operator delete(block); }

void* RefCounted::allocate_unpooled(size_t size) {
  const int c = detail::RefCountedPoolPolicy::size_class(size);
  if (c < 0) return ::operator new(size);
  return ::operator new(static_cast<size_t>(c + 1) * detail::RefCountedPoolPolicy::kGranule);
}

}  // namespace anatomy
