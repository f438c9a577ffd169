// StreamEvents: the frees that wait for other streams (docs/allocator.md "record_stream"). A
// block freed after record_stream gets an event recorded on each stream that used it and stays
// active until all of them complete; while a route to a private pool is in force it waits here
// without events instead (Note [Allocating while a graph captures]). The locked front
// (caching_allocator.cpp) owns it: it records, processes and synchronizes through it, and gives
// the block back to its pool when `done` is called. Inline: the front processes events at the
// start of every allocation. Not locked: called under the allocator's lock.
#pragma once

#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "anatomy/alloc/caching_block.h"
#include "anatomy/alloc/memory_provider.h"

namespace anatomy::alloc {

// Note [Allocating while a graph captures]
// A route to a private pool is in force while a CUDA graph captures, and a capture forbids
// querying or recording events outside it (CUDA would invalidate the capture). So while any
// route is in force, as PyTorch's allocator while captures are underway: malloc processes no
// events, a freed block that other streams used waits with its stream uses instead of getting
// events (defer; record_deferred runs for it when the last route ends), and a request past the
// cache skips the out-of-memory ladder's last rung, which synchronizes the device (the rungs
// that release wholly free cached segments stay, as in PyTorch; the CUDA provider releases with
// the capturing thread's mode relaxed).
class StreamEvents {
 public:
  explicit StreamEvents(MemoryProvider& provider) : provider_(provider) {}
  StreamEvents(const StreamEvents&) = delete;
  StreamEvents& operator=(const StreamEvents&) = delete;

  // The freed `block`, which other streams used (its stream_uses), waits for an event recorded on
  // each of them.
  void record(Block* block) {
    for (StreamId s : block->stream_uses) {
      EventId e = provider_.create_event();
      provider_.record_event(e, s);
      ++block->event_count;
      outstanding_[s].emplace_back(e, block);
    }
    block->stream_uses.clear();
  }
  // The freed `block` waits with its stream uses and no event while a route is in force: active,
  // neither free nor mergeable.
  void defer(Block* block) {
    block->event_count = 1;  // a placeholder, until its events are recorded
    deferred_.push_back(block);
  }
  // Records the events of the deferred blocks (no route is in force any more).
  void record_deferred() {
    for (Block* block : deferred_) {
      block->event_count = 0;  // the placeholder of defer
      record(block);
    }
    deferred_.clear();
  }

  // Finishes the frees whose events have completed, without blocking: `done(block)` for each
  // block whose last event did. Per stream, events complete in order, so the first incomplete
  // one ends that stream's scan.
  template <typename F>
  void process(F&& done) {
    for (auto it = outstanding_.begin(); it != outstanding_.end();) {
      auto& queue = it->second;
      while (!queue.empty() && provider_.query_event(queue.front().first)) {
        finish(queue.front(), done);
        queue.pop_front();
      }
      it = queue.empty() ? outstanding_.erase(it) : std::next(it);
    }
  }
  // Every event has completed (the caller synchronized the device): `done` as process() calls it.
  template <typename F>
  void finish_all(F&& done) {
    for (auto& [stream, queue] : outstanding_) {
      for (auto& entry : queue) finish(entry, done);
    }
    outstanding_.clear();
  }

  // Every block waiting here: once per outstanding event, and each deferred one.
  template <typename F>
  void for_each_waiting(F&& f) const {
    for (const auto& [stream, queue] : outstanding_) {
      for (const auto& entry : queue) f(entry.second);
    }
    for (Block* b : deferred_) f(b);
  }

 private:
  template <typename F>
  void finish(std::pair<EventId, Block*> entry, F& done) {
    provider_.destroy_event(entry.first);
    if (--entry.second->event_count == 0) done(entry.second);
  }

  MemoryProvider& provider_;
  std::map<StreamId, std::deque<std::pair<EventId, Block*>>> outstanding_;
  std::vector<Block*> deferred_;
};

}  // namespace anatomy::alloc
