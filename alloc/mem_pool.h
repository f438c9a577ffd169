// MemPool and UseMemPool: RAII handles over the caching allocator's private pools, as PyTorch's
// torch.cuda.MemPool and torch.cuda.use_mem_pool. A MemPool is one user of its pool (a copy is
// another: the copies share the pool's segments); a UseMemPool routes allocations to a pool while
// it lives. The pool itself outlives its handles while any of its blocks is allocated
// (docs/allocator.md "Private pools").
//
//   alloc::MemPool pool(cache);                    // a new private pool, one user
//   {
//     alloc::UseMemPool route(pool, stream);       // this thread's allocations on `stream`...
//     void* p = cache.raw_alloc(1 << 20, stream);  // ...come from the pool's own segments
//   }
//   alloc::MemPool graph2 = pool;                  // a second user: shares the segments
#pragma once

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/private_pool.h"

namespace anatomy::alloc {

class MemPool {
 public:
  // A new pool of `allocator` (create_pool), which must outlive the handle.
  explicit MemPool(CachingAllocator& allocator);
  // One more user of the existing pool `shared` (retain_pool): a ValueError when it has none.
  MemPool(CachingAllocator& allocator, PoolId shared);
  MemPool(const MemPool& other);  // shares other's pool
  MemPool& operator=(const MemPool& other);
  MemPool(MemPool&& other) noexcept;  // takes other's use; other then holds none
  MemPool& operator=(MemPool&& other) noexcept;
  ~MemPool();  // release_pool

  // The pool (the default id for a moved-from handle).
  PoolId id() const { return id_; }
  // Both are a ValueError on a moved-from handle.
  CachingAllocator& allocator() const;
  PoolStats stats() const { return allocator().pool_stats(id_); }

 private:
  void reset() noexcept;

  CachingAllocator* allocator_ = nullptr;
  PoolId id_;
};

class UseMemPool {
 public:
  // Routes every allocation the calling thread makes (any stream) to `pool`, as use_mem_pool.
  explicit UseMemPool(const MemPool& pool);
  // Routes the calling thread's allocations on `stream` to `pool`.
  UseMemPool(const MemPool& pool, StreamId stream);
  // Routes the allocations `filter` accepts, from any thread.
  UseMemPool(const MemPool& pool, StreamFilter filter);
  ~UseMemPool();  // end_allocate_to_pool
  UseMemPool(const UseMemPool&) = delete;
  UseMemPool& operator=(const UseMemPool&) = delete;

 private:
  CachingAllocator& allocator_;
  PoolId id_;
};

}  // namespace anatomy::alloc
