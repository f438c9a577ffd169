// The Allocator interface and DataPtr, the owning pointer it returns.
//
// Implementations live in alloc/ (the CPU allocator, the caching device allocator) and in
// backends; core only knows this interface and a per-device-type registry, so that a backend
// defined outside anatomy brings its own allocator.
#pragma once

#include <cstddef>
#include <utility>

#include "anatomy/core/device.h"
#include "anatomy/core/intrusive_ptr.h"

namespace anatomy {

class StorageImpl;

using DeleterFn = void (*)(void* ctx);

// Owns a block of memory: `ptr` is where the data is, `ctx` is what `deleter` is called with
// when the DataPtr dies (often the same pointer; a from_blob tensor's user deleter context
// otherwise). Move-only.
class DataPtr {
 public:
  DataPtr() = default;
  DataPtr(void* ptr, Device device) : ptr_(ptr), device_(device) {}
  DataPtr(void* ptr, void* ctx, DeleterFn deleter, Device device)
      : ptr_(ptr), ctx_(ctx), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { *this = std::move(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      release_now();
      ptr_ = std::exchange(o.ptr_, nullptr);
      ctx_ = std::exchange(o.ctx_, nullptr);
      deleter_ = std::exchange(o.deleter_, nullptr);
      device_ = o.device_;
    }
    return *this;
  }
  ~DataPtr() { release_now(); }

  void* get() const { return ptr_; }
  void* context() const { return ctx_; }
  DeleterFn deleter() const { return deleter_; }
  Device device() const { return device_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  void release_now() noexcept {
    if (deleter_) deleter_(ctx_);
    deleter_ = nullptr;
    ptr_ = ctx_ = nullptr;
  }
  void* ptr_ = nullptr;
  void* ctx_ = nullptr;
  DeleterFn deleter_ = nullptr;
  Device device_;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for `nbytes` bytes (nbytes may be 0: then the pointer may be null). Throws
  // OutOfMemoryError when it cannot.
  virtual DataPtr allocate(size_t nbytes) = 0;
  // A Storage of `nbytes` bytes from this allocator, for a new tensor. The default wraps
  // allocate(); an allocator may instead place a small request inside the storage object, one
  // allocation for both (the CPU allocator does: Note [Small CPU storage inline]).
  virtual IntrusivePtr<StorageImpl> make_storage(size_t nbytes);
};

// The allocator that factories use for a device type; nullptr when none is registered.
Allocator* get_allocator(DeviceType type);
// Installs `allocator` (not owned; it must outlive every tensor it allocates) for `type`.
void set_allocator(DeviceType type, Allocator* allocator);

}  // namespace anatomy
