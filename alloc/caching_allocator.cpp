// The caching allocator's locked front: each public method of CachingAllocator takes the
// allocator's mutex, then calls into its parts (caching_allocator_impl.h lists them), which read
// and update the stats and the history under it. The policy follows PyTorch's
// CUDACachingAllocator: the names of the steps (get_free_block, alloc_block,
// release_available_cached_blocks, free_block, ...) are PyTorch's, so the two read side by side.
// The cached allocate + free pair runs through this file and the inline block pool alone
// (caching_block_pool.h), so the compiler sees all of it at once.
#include "anatomy/alloc/caching_allocator.h"

#include <mutex>
#include <unordered_set>
#include <utility>

#include "anatomy/alloc/caching_block_pool.h"
#include "anatomy/alloc/memory_snapshot.h"
#include "anatomy/core/error.h"
#include "anatomy/core/op_name_hook.h"

namespace anatomy::alloc {

namespace {

// The DataPtr's deleter: its context is the Block, so no lookup by pointer.
void free_block_of_data_ptr(void* ctx) {
  auto* block = static_cast<Block*>(ctx);
  CachingAllocator::Impl* impl = block->pool->owner;
  std::lock_guard<AllocatorMutex> g(impl->mutex);
  impl->free(block);
}

}  // namespace

CachingAllocator::CachingAllocator(MemoryProvider& provider, const AllocConf& conf) {
  check_conf(conf, provider);
  impl_ = std::make_unique<Impl>(provider, conf);
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->release_cached_blocks();
  impl_->private_pools.for_each([&](PoolState& state) {
    auto& pp = static_cast<PrivatePool&>(state);
    impl_->release_blocks(pp.small);
    impl_->release_blocks(pp.large);
  });
  if (impl_->history.enabled()) op_name_hook::remove_listener();
  // What is left is in use by someone who will never free it through us; drop the bookkeeping
  // (the provider's memory stays with the provider, expandable segments' pages mapped).
  for (auto& [key, es] : impl_->expandable_segments) (void)es->segment.release();
  std::unordered_set<Block*> heads;
  impl_->for_each_active([&](Block* b) {
    while (b->prev) b = b->prev;
    heads.insert(b);
  });
  for (Block* b : heads) {
    while (b) delete std::exchange(b, b->next);
  }
}

DataPtr CachingAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return DataPtr(nullptr, impl_->device);
  StreamId stream = impl_->provider.current_stream();
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  Block* block = impl_->malloc(nbytes, stream);
  return DataPtr(block->ptr, block, &free_block_of_data_ptr, impl_->device);
}

void* CachingAllocator::raw_alloc(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->malloc(nbytes, stream)->ptr;
}

void CachingAllocator::raw_free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  Block* block = impl_->allocated_blocks.take(ptr);
  ANATOMY_CHECK(block != nullptr, ValueError,
                "raw_free: {} was not allocated by this caching allocator (or was already freed)", ptr);
  impl_->free_unlisted(block);
}

void CachingAllocator::record_stream(void* ptr, StreamId stream) {
  if (ptr == nullptr) return;
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  Block** found = impl_->allocated_blocks.find(ptr);
  ANATOMY_CHECK(found != nullptr, ValueError,
                "record_stream: {} is not the start of a block allocated by this caching allocator", ptr);
  // Work on the allocation stream is ordered before reuse already; only other streams need events.
  if (stream != (*found)->stream) (*found)->stream_uses.insert(stream);
}

void CachingAllocator::empty_cache() {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->release_cached_blocks();
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->stats;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->stats.for_each_array([](StatArray& a) {
    for (Stat& s : a.s) s.peak = s.current;
  });
}

std::vector<SegmentInfo> CachingAllocator::segments() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->segments();
}

void CachingAllocator::record_memory_history(bool enabled, size_t max_entries) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  const bool was = impl_->history.enabled();
  impl_->history.set(enabled, max_entries);
  // The dispatcher names operators only while some allocator records (core/op_name_hook.h).
  if (enabled && !was) op_name_hook::add_listener();
  if (!enabled && was) op_name_hook::remove_listener();
}

MemorySnapshot CachingAllocator::memory_snapshot() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return MemorySnapshot{
      impl_->device, impl_->segments(), impl_->history.entries(), impl_->history.max_entries(), impl_->stats, {}};
}

Device CachingAllocator::device() const { return impl_->device; }

AllocConf CachingAllocator::conf() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->conf;
}

// Applies to what happens next: with expandable_segments switched on, requests no cached block
// fits grow a segment; switched off, they reserve plain segments, while the blocks of existing
// expandable segments stay usable (they no longer grow) and shrink as usual.
void CachingAllocator::set_conf(const AllocConf& conf) {
  check_conf(conf, impl_->provider);
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->set_conf(conf);
}

PoolId CachingAllocator::create_pool() {
  auto state = std::make_unique<PrivatePool>(impl_.get());
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->private_pools.create(std::move(state)).stats.id;
}

void CachingAllocator::retain_pool(PoolId pool) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  ++impl_->private_pools.live(pool, "retain_pool").stats.use_count;
}

void CachingAllocator::release_pool(PoolId pool) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->drop_use(impl_->private_pools.live(pool, "release_pool"));
}

void CachingAllocator::begin_allocate_to_pool(PoolId pool, StreamFilter filter) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->private_pools.begin_routing(pool, std::move(filter));
}

void CachingAllocator::end_allocate_to_pool(PoolId pool) {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  impl_->drop_use(impl_->private_pools.end_routing(pool));
  impl_->insert_deferred_events();
}

PoolStats CachingAllocator::pool_stats(PoolId pool) const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->private_pools.existing(pool, "pool_stats").stats;
}

std::vector<PoolStats> CachingAllocator::pools() const {
  std::lock_guard<AllocatorMutex> g(impl_->mutex);
  return impl_->private_pools.stats();
}

}  // namespace anatomy::alloc
