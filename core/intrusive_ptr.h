// A minimal intrusive reference count: the object carries its own atomic count, so a handle
// (Tensor, Storage) is one pointer wide and copying it is one atomic increment.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "anatomy/core/thread_block_cache.h"

namespace anatomy {

namespace detail {
// The pool behind RefCounted::operator new: 16-byte classes up to kPooledMaxBytes.
struct RefCountedPoolPolicy {
  static constexpr size_t kGranule = 16;  // operator new's alignment
  static constexpr size_t kMaxBytes = 512;
  static constexpr int kClasses = static_cast<int>(kMaxBytes / kGranule);
  static constexpr int kPerClass = 32;
  static void release(void* block);
  // The class of a pooled size, or -1. A class's blocks are all allocated at its full size, so
  // any request of the class can reuse any of them.
  static constexpr int size_class(size_t size) {
    return size == 0 || size > kMaxBytes ? -1 : static_cast<int>((size + kGranule - 1) / kGranule) - 1;
  }
};
using RefCountedPool = ThreadBlockCache<RefCountedPoolPolicy>;
}  // namespace detail

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  uint32_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

  // Objects of up to kPooledMaxBytes (TensorImpl, StorageImpl, version counters, autograd nodes)
  // come from per-thread free lists (core/thread_block_cache.h): every operator call makes and
  // frees a few, and malloc/free would cost more than a small op's whole kernel.
  // Both are inline: the size is a constant at every `new T`, so the class is too, and taking a
  // block is a thread-local load, a compare and a pop.
  static constexpr size_t kPooledMaxBytes = detail::RefCountedPoolPolicy::kMaxBytes;
  static void* operator new(size_t size) {
    const int c = detail::RefCountedPoolPolicy::size_class(size);
    if (c >= 0) [[likely]] {
      if (void* block = detail::RefCountedPool::take(c)) [[likely]]
        return block;
    }
    return allocate_unpooled(size);
  }
  static void operator delete(void* p, size_t size) noexcept {
    const int c = detail::RefCountedPoolPolicy::size_class(size);
    if (c >= 0 && p != nullptr) [[likely]] {
      detail::RefCountedPool::give(c, p);
      return;
    }
    ::operator delete(p);
  }

 private:
  // A new block: a pooled class's full size (so it can serve the class later), or the size.
  static void* allocate_unpooled(size_t size);

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

  // A new object with its count set to 1 by a plain store: no other thread can see it yet, so
  // the first reference needs no atomic read-modify-write.
  template <typename... Args>
  static IntrusivePtr make(Args&&... args) {
    return make_as<T>(std::forward<Args>(args)...);
  }
  // make() of a class derived from T.
  template <typename U, typename... Args>
  static IntrusivePtr make_as(Args&&... args) {
    IntrusivePtr out;
    out.p_ = new U(std::forward<Args>(args)...);
    out.p_->refcount_.store(1, std::memory_order_relaxed);
    return out;
  }

  // The last reference skips the atomic decrement: holding the only reference, no other thread
  // can be copying or dropping one, so nothing can race with the delete. Temporaries, the common
  // case, are freed with one load instead of a locked instruction. Not so for a class whose
  // objects other threads can find through a plain pointer (Note [Weak references]): there
  // every release decrements, and try_retain sees the zero.
  void reset() noexcept {
    if constexpr (requires { T::kWeaklyReferenced; }) {
      if (p_ && p_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;
    } else {
      if (p_ && (p_->refcount_.load(std::memory_order_acquire) == 1 ||
                 p_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1)) {
        delete p_;
      }
    }
    p_ = nullptr;
  }

  // Note [Weak references]
  // A class that declares `static constexpr bool kWeaklyReferenced = true` may be reached through
  // a plain pointer that does not own it (a leaf's AccumulateGrad, from the leaf's autograd
  // metadata), by several threads. The owner of that pointer clears it in the object's destructor
  // under a lock, and readers call try_retain under the same lock: it takes a reference unless the
  // count already reached zero (the object is being destroyed, and the reader must make another).
  static IntrusivePtr try_retain(T* p) noexcept {
    static_assert(
        requires { T::kWeaklyReferenced; }, "try_retain is for weakly referenced classes");
    IntrusivePtr out;
    uint32_t n = p->refcount_.load(std::memory_order_relaxed);
    while (n != 0) {
      if (p->refcount_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        out.p_ = p;
        break;
      }
    }
    return out;
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
