// The per-device-type allocator registry.
#include "anatomy/core/allocator.h"

#include "anatomy/core/storage.h"

#include <atomic>

namespace anatomy {
namespace {
std::atomic<Allocator*> g_allocators[kNumDeviceTypes];
}

IntrusivePtr<StorageImpl> Allocator::make_storage(size_t nbytes) {
  return IntrusivePtr<StorageImpl>::make(allocate(nbytes), nbytes, this);
}

Allocator* get_allocator(DeviceType type) {
  return g_allocators[static_cast<int>(type)].load(std::memory_order_acquire);
}

void set_allocator(DeviceType type, Allocator* allocator) {
  g_allocators[static_cast<int>(type)].store(allocator, std::memory_order_release);
}

}  // namespace anatomy
