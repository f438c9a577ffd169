// The simulated device (see simulated_provider.h): host memory, test-controlled events.
#include "anatomy/alloc/simulated_provider.h"

#include <cstdlib>

#include "anatomy/core/error.h"

namespace anatomy::alloc {
namespace {

constexpr size_t kSimulatedAlignment = 512;  // what the allocator's 512-byte rounding assumes
thread_local StreamId t_current_stream = 0;

}  // namespace

SimulatedProvider::SimulatedProvider(size_t capacity, Device device) : capacity_(capacity), device_(device) {}

SimulatedProvider::~SimulatedProvider() {
  // The allocator should have released everything; free what is left so a test that failed
  // half-way does not also leak.
  for (auto& [ptr, nbytes] : live_) std::free(ptr);
}

void* SimulatedProvider::reserve(size_t nbytes) {
  std::lock_guard<std::mutex> g(mutex_);
  if (nbytes == 0 || nbytes > capacity_ - counters_.used_bytes) {
    ++counters_.failed_reserves;
    return nullptr;
  }
  size_t rounded = (nbytes + kSimulatedAlignment - 1) / kSimulatedAlignment * kSimulatedAlignment;
  void* p = std::aligned_alloc(kSimulatedAlignment, rounded);
  if (p == nullptr) {  // the host itself ran out: still a device-style failure
    ++counters_.failed_reserves;
    return nullptr;
  }
  live_.emplace(p, nbytes);
  counters_.used_bytes += nbytes;
  ++counters_.reserves;
  return p;
}

void SimulatedProvider::release(void* ptr, size_t nbytes) {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = live_.find(ptr);
  ANATOMY_INTERNAL_ASSERT(it != live_.end() && it->second == nbytes,
                          "simulated provider: release of {} ({} bytes) that was not reserved", ptr, nbytes);
  live_.erase(it);
  std::free(ptr);
  counters_.used_bytes -= nbytes;
  ++counters_.releases;
}

EventId SimulatedProvider::create_event() {
  std::lock_guard<std::mutex> g(mutex_);
  EventId id = next_event_++;
  events_.emplace(id, EventState{});
  ++counters_.live_events;
  return id;
}

void SimulatedProvider::record_event(EventId event, StreamId stream) {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = events_.find(event);
  ANATOMY_INTERNAL_ASSERT(it != events_.end(), "simulated provider: record of unknown event {}", event);
  it->second = EventState{stream, false};
}

bool SimulatedProvider::query_event(EventId event) {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = events_.find(event);
  ANATOMY_INTERNAL_ASSERT(it != events_.end(), "simulated provider: query of unknown event {}", event);
  return it->second.done;
}

void SimulatedProvider::destroy_event(EventId event) {
  std::lock_guard<std::mutex> g(mutex_);
  ANATOMY_INTERNAL_ASSERT(events_.erase(event) == 1, "simulated provider: destroy of unknown event {}", event);
  --counters_.live_events;
}

void SimulatedProvider::synchronize() {
  std::lock_guard<std::mutex> g(mutex_);
  for (auto& [id, e] : events_) e.done = true;
  ++counters_.synchronizes;
}

StreamId SimulatedProvider::current_stream() const { return t_current_stream; }
void SimulatedProvider::set_current_stream(StreamId stream) { t_current_stream = stream; }

size_t SimulatedProvider::free_memory() const {
  std::lock_guard<std::mutex> g(mutex_);
  return capacity_ - counters_.used_bytes;
}

void SimulatedProvider::complete(EventId event) {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = events_.find(event);
  ANATOMY_CHECK(it != events_.end(), ValueError, "SimulatedProvider::complete: unknown event {}", event);
  it->second.done = true;
}

void SimulatedProvider::complete_all(StreamId stream) {
  std::lock_guard<std::mutex> g(mutex_);
  for (auto& [id, e] : events_) {
    if (e.stream == stream) e.done = true;
  }
}

size_t SimulatedProvider::pending_events() const {
  std::lock_guard<std::mutex> g(mutex_);
  size_t n = 0;
  for (auto& [id, e] : events_) n += !e.done;
  return n;
}

size_t SimulatedProvider::pending_events(StreamId stream) const {
  std::lock_guard<std::mutex> g(mutex_);
  size_t n = 0;
  for (auto& [id, e] : events_) n += !e.done && e.stream == stream;
  return n;
}

SimulatedProvider::Counters SimulatedProvider::counters() const {
  std::lock_guard<std::mutex> g(mutex_);
  return counters_;
}

}  // namespace anatomy::alloc
