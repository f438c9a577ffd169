// MemPool and UseMemPool (see mem_pool.h): each holds one use or one route of a pool and gives it
// back when destroyed.
#include "anatomy/alloc/mem_pool.h"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

#include "anatomy/core/error.h"

namespace anatomy::alloc {
namespace {

// A destructor cannot throw. Giving back a use fails only when someone else released it already
// (release_pool or end_allocate_to_pool on an id a handle holds), which is that caller's mistake:
// say so rather than terminate.
template <typename F>
void give_back(F&& f) noexcept {
  try {
    f();
  } catch (const std::exception& e) {
    fmt::print(stderr, "anatomy: warning: {}\n", e.what());
  }
}

}  // namespace

MemPool::MemPool(CachingAllocator& allocator) : allocator_(&allocator), id_(allocator.create_pool()) {}

MemPool::MemPool(CachingAllocator& allocator, PoolId shared) : allocator_(&allocator), id_(shared) {
  allocator.retain_pool(shared);
}

MemPool::MemPool(const MemPool& other) : allocator_(other.allocator_), id_(other.id_) {
  if (allocator_) allocator_->retain_pool(id_);
}

MemPool& MemPool::operator=(const MemPool& other) {
  if (this != &other) {
    if (other.allocator_) other.allocator_->retain_pool(other.id_);  // first, so a throw changes nothing
    reset();
    allocator_ = other.allocator_;
    id_ = other.id_;
  }
  return *this;
}

MemPool::MemPool(MemPool&& other) noexcept
    : allocator_(std::exchange(other.allocator_, nullptr)), id_(std::exchange(other.id_, PoolId{})) {}

MemPool& MemPool::operator=(MemPool&& other) noexcept {
  if (this != &other) {
    reset();
    allocator_ = std::exchange(other.allocator_, nullptr);
    id_ = std::exchange(other.id_, PoolId{});
  }
  return *this;
}

MemPool::~MemPool() { reset(); }

CachingAllocator& MemPool::allocator() const {
  ANATOMY_CHECK(allocator_ != nullptr, ValueError, "MemPool: this handle was moved from and holds no pool");
  return *allocator_;
}

void MemPool::reset() noexcept {
  if (allocator_) give_back([&] { allocator_->release_pool(id_); });
  allocator_ = nullptr;
  id_ = PoolId{};
}

UseMemPool::UseMemPool(const MemPool& pool) : UseMemPool(pool, current_thread()) {}

UseMemPool::UseMemPool(const MemPool& pool, StreamId stream) : UseMemPool(pool, current_thread_on_stream(stream)) {}

UseMemPool::UseMemPool(const MemPool& pool, StreamFilter filter) : allocator_(pool.allocator()), id_(pool.id()) {
  allocator_.begin_allocate_to_pool(id_, std::move(filter));
}

UseMemPool::~UseMemPool() {
  give_back([&] { allocator_.end_allocate_to_pool(id_); });
}

}  // namespace anatomy::alloc
