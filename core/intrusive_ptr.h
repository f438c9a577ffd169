// A minimal intrusive reference count: the object carries its own atomic count, so a handle
// (Tensor, Storage) is one pointer wide and copying it is one atomic increment.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace anatomy {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  uint32_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  template <typename T>
  friend class IntrusivePtr;
  mutable std::atomic<uint32_t> refcount_{0};
};

template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() noexcept = default;
  // Takes shared ownership of `p` (which may already be owned by other IntrusivePtrs).
  explicit IntrusivePtr(T* p) noexcept : p_(p) { retain(); }
  IntrusivePtr(const IntrusivePtr& o) noexcept : p_(o.p_) { retain(); }
  IntrusivePtr(IntrusivePtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <typename U>
  IntrusivePtr(IntrusivePtr<U> o) noexcept : p_(o.release()) {}
  ~IntrusivePtr() { reset(); }

  IntrusivePtr& operator=(IntrusivePtr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }

  template <typename... Args>
  static IntrusivePtr make(Args&&... args) {
    return IntrusivePtr(new T(std::forward<Args>(args)...));
  }

  void reset() noexcept {
    if (p_ && p_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;
    p_ = nullptr;
  }
  // Gives up ownership without decrementing; used for conversions between pointer types.
  T* release() noexcept { return std::exchange(p_, nullptr); }

  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  uint32_t use_count() const noexcept { return p_ ? p_->use_count() : 0; }
  bool operator==(const IntrusivePtr& o) const noexcept { return p_ == o.p_; }

 private:
  void retain() noexcept {
    if (p_) p_->refcount_.fetch_add(1, std::memory_order_relaxed);
  }
  template <typename U>
  friend class IntrusivePtr;
  T* p_ = nullptr;
};

}  // namespace anatomy
