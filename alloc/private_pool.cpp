// Pool ids, use counts and routes of the caching allocator's private pools (see private_pool.h).
#include "anatomy/alloc/private_pool.h"

#include <algorithm>
#include <thread>

#include "anatomy/core/error.h"

namespace anatomy::alloc {

StreamFilter current_thread_on_stream(StreamId stream) {
  return [thread = std::this_thread::get_id(), stream](StreamId s) {
    return s == stream && std::this_thread::get_id() == thread;
  };
}

StreamFilter current_thread() {
  return [thread = std::this_thread::get_id()](StreamId) { return std::this_thread::get_id() == thread; };
}

PoolState& PrivatePools::create(std::unique_ptr<PoolState> state) {
  const uint64_t id = next_id_++;
  state->stats = PoolStats{};
  state->stats.id = PoolId{id};
  state->stats.use_count = 1;
  return *pools_.emplace(id, std::move(state)).first->second;
}

PoolState* PrivatePools::checked(PoolId id, std::string_view call) const {
  ANATOMY_CHECK(!id.is_default(), ValueError,
                "{}: pool id 0 names no private pool (it stands for the allocator's ordinary pools)", call);
  ANATOMY_CHECK(id.value < next_id_, ValueError, "{}: private pool {} was never created by this allocator", call,
                id.value);
  auto it = pools_.find(id.value);
  ANATOMY_CHECK(it != pools_.end(), ValueError,
                "{}: private pool {} was released (its users have gone and its memory went back to the cache)", call,
                id.value);
  return it->second.get();
}

const PoolState& PrivatePools::existing(PoolId id, std::string_view call) const { return *checked(id, call); }

PoolState& PrivatePools::live(PoolId id, std::string_view call) {
  PoolState& state = *checked(id, call);
  ANATOMY_CHECK(state.stats.use_count > 0, ValueError,
                "{}: private pool {} was released (it has no users left; {} of its blocks are still allocated)", call,
                id.value, state.stats.allocations);
  return state;
}

void PrivatePools::erase(PoolId id) { pools_.erase(id.value); }

void PrivatePools::begin_routing(PoolId id, StreamFilter filter) {
  PoolState& state = live(id, "begin_allocate_to_pool");
  ANATOMY_CHECK(!state.stats.routing, ValueError,
                "begin_allocate_to_pool: allocations are already routed to private pool {} (a pool has one route at "
                "a time; end_allocate_to_pool first)",
                id.value);
  ANATOMY_CHECK(static_cast<bool>(filter), ValueError,
                "begin_allocate_to_pool: the stream filter for private pool {} is empty", id.value);
  routes_.emplace_back(&state, std::move(filter));
  state.stats.routing = true;
  ++state.stats.use_count;
}

PoolState& PrivatePools::end_routing(PoolId id) {
  auto it = std::find_if(routes_.begin(), routes_.end(), [&](const auto& r) { return r.first->stats.id == id; });
  ANATOMY_CHECK(it != routes_.end(), ValueError,
                "end_allocate_to_pool: no allocations are routed to pool {} (begin_allocate_to_pool was not called "
                "for it, or its route already ended)",
                id.value);
  PoolState& state = *it->first;
  routes_.erase(it);
  state.stats.routing = false;
  return state;
}

PoolState* PrivatePools::route(StreamId stream) const {
  for (const auto& [state, filter] : routes_) {
    if (filter(stream)) return state;
  }
  return nullptr;
}

std::vector<PoolStats> PrivatePools::stats() const {
  std::vector<PoolStats> out;
  out.reserve(pools_.size());
  for (const auto& [id, state] : pools_) out.push_back(state->stats);
  return out;
}

int64_t PrivatePools::reserved_bytes() const {
  int64_t total = 0;
  for (const auto& [id, state] : pools_) total += state->stats.reserved_bytes;
  return total;
}

}  // namespace anatomy::alloc
