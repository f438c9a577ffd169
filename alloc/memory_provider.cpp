// The defaults of MemoryProvider's virtual-memory calls (see memory_provider.h): a provider
// without virtual memory never has them called, since the allocator checks
// supports_virtual_memory() before it uses expandable segments.
#include "anatomy/alloc/memory_provider.h"

#include "anatomy/core/error.h"

namespace anatomy::alloc {

void* MemoryProvider::reserve_address(size_t nbytes) {
  ANATOMY_THROW(NotImplementedError, "memory provider of {}: reserve_address({}): no virtual memory support",
                device().str(), nbytes);
}

void MemoryProvider::release_address(void* ptr, size_t nbytes) {
  ANATOMY_THROW(NotImplementedError, "memory provider of {}: release_address({}, {}): no virtual memory support",
                device().str(), ptr, nbytes);
}

bool MemoryProvider::map(void* ptr, size_t nbytes) {
  ANATOMY_THROW(NotImplementedError, "memory provider of {}: map({}, {}): no virtual memory support", device().str(),
                ptr, nbytes);
}

void MemoryProvider::unmap(void* ptr, size_t nbytes) {
  ANATOMY_THROW(NotImplementedError, "memory provider of {}: unmap({}, {}): no virtual memory support", device().str(),
                ptr, nbytes);
}

}  // namespace anatomy::alloc
