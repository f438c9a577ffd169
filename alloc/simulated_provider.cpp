// The simulated device (see simulated_provider.h): host memory, test-controlled events.
#include "anatomy/alloc/simulated_provider.h"

#include <sys/mman.h>

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
  for (auto& [ptr, nbytes] : live_) {
    if (!scattered_.contains(static_cast<char*>(ptr))) std::free(ptr);
  }
  for (auto& [ptr, nbytes] : ranges_) ::munmap(ptr, nbytes);
  if (scatter_range_ != nullptr) ::munmap(scatter_range_, scatter_size_);
}

void SimulatedProvider::scatter_segments(uint64_t seed) {
  std::lock_guard<std::mutex> g(mutex_);
  ANATOMY_CHECK(scatter_range_ == nullptr && live_.empty(), ValueError,
                "SimulatedProvider::scatter_segments: call it once, before the first reservation");
  // Address space only (no access, nothing committed): a placed segment's pages are made
  // accessible when it is reserved and dropped again when it is released.
  const size_t size = (capacity_ / kPageSize + 1) * kPageSize * 8;
  void* range = ::mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ANATOMY_CHECK(range != MAP_FAILED, OutOfMemoryError,
                "SimulatedProvider::scatter_segments: no {} bytes of address space", size);
  scatter_range_ = static_cast<char*>(range);
  scatter_size_ = size;
  scatter_rng_.seed(seed);
}

// At most an eighth of the range is ever in use, so a random place is free with probability at
// least 7/8 and a few draws find one; a first fit from a random start is the fallback.
void* SimulatedProvider::place_scattered(size_t nbytes) {
  const size_t span = (nbytes + kPageSize - 1) / kPageSize * kPageSize;
  const size_t places = (scatter_size_ - span) / kPageSize + 1;
  auto fits = [&](char* p) {
    auto next = scattered_.lower_bound(p);
    if (next != scattered_.end() && next->first < p + span) return false;
    return next == scattered_.begin() || std::prev(next)->first + std::prev(next)->second <= p;
  };
  char* place = nullptr;
  for (int draw = 0; draw < 64 && place == nullptr; ++draw) {
    char* p = scatter_range_ + scatter_rng_() % places * kPageSize;
    if (fits(p)) place = p;
  }
  for (size_t i = 0, start = scatter_rng_() % places; i < places && place == nullptr; ++i) {
    char* p = scatter_range_ + (start + i) % places * kPageSize;
    if (fits(p)) place = p;
  }
  if (place == nullptr || ::mprotect(place, span, PROT_READ | PROT_WRITE) != 0) return nullptr;
  scattered_.emplace(place, span);
  return place;
}

void* SimulatedProvider::reserve(size_t nbytes) {
  std::unique_lock<std::mutex> g(mutex_);
  if (holding_reserves_) {
    ++held_reserves_;
    reserve_hold_.notify_all();
    reserve_hold_.wait(g, [&] { return !holding_reserves_; });
    --held_reserves_;
  }
  if (nbytes == 0 || nbytes > capacity_ - counters_.used_bytes) {
    ++counters_.failed_reserves;
    return nullptr;
  }
  size_t rounded = (nbytes + kSimulatedAlignment - 1) / kSimulatedAlignment * kSimulatedAlignment;
  void* p = scatter_range_ != nullptr ? place_scattered(nbytes) : std::aligned_alloc(kSimulatedAlignment, rounded);
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
  if (auto placed = scattered_.find(static_cast<char*>(ptr)); placed != scattered_.end()) {
    ::madvise(ptr, placed->second, MADV_DONTNEED);
    ::mprotect(ptr, placed->second, PROT_NONE);
    scattered_.erase(placed);
  } else {
    std::free(ptr);
  }
  counters_.used_bytes -= nbytes;
  ++counters_.releases;
}

// The range is host address space with no access and no memory committed (MAP_NORESERVE), so a
// simulated device may reserve its whole capacity per segment as CUDA does, at no cost.
void* SimulatedProvider::reserve_address(size_t nbytes) {
  std::lock_guard<std::mutex> g(mutex_);
  ANATOMY_INTERNAL_ASSERT(virtual_memory_ && nbytes > 0 && nbytes % kPageSize == 0,
                          "simulated provider: reserve_address of {} bytes", nbytes);
  // mmap aligns to the host page only: reserve a page more and trim to a kPageSize boundary.
  const size_t span = nbytes + kPageSize;
  void* raw = ::mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  char* start = static_cast<char*>(raw);
  char* aligned = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(start) + kPageSize - 1) / kPageSize * kPageSize);
  if (aligned > start) ::munmap(start, static_cast<size_t>(aligned - start));
  char* end = aligned + nbytes;
  if (start + span > end) ::munmap(end, static_cast<size_t>(start + span - end));
  ranges_.emplace(aligned, nbytes);
  ++counters_.address_reserves;
  return aligned;
}

void SimulatedProvider::release_address(void* ptr, size_t nbytes) {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = ranges_.find(static_cast<char*>(ptr));
  ANATOMY_INTERNAL_ASSERT(it != ranges_.end() && it->second == nbytes,
                          "simulated provider: release_address of {} ({} bytes) that was not reserved", ptr, nbytes);
  auto m = mappings_.lower_bound(it->first);
  ANATOMY_INTERNAL_ASSERT(m == mappings_.end() || m->first >= it->first + nbytes,
                          "simulated provider: release_address of {} with pages still mapped", ptr);
  ::munmap(it->first, nbytes);
  ranges_.erase(it);
  ++counters_.address_releases;
}

bool SimulatedProvider::map(void* ptr, size_t nbytes) {
  std::lock_guard<std::mutex> g(mutex_);
  char* p = static_cast<char*>(ptr);
  auto r = ranges_.upper_bound(p);
  ANATOMY_INTERNAL_ASSERT(
      r != ranges_.begin() && nbytes > 0 && nbytes % kPageSize == 0 && reinterpret_cast<uintptr_t>(p) % kPageSize == 0,
      "simulated provider: map({}, {}): not whole pages of a reserved range", ptr, nbytes);
  --r;
  ANATOMY_INTERNAL_ASSERT(p + nbytes <= r->first + r->second, "simulated provider: map({}, {}) past its range", ptr,
                          nbytes);
  auto next = mappings_.lower_bound(p);
  const bool overlaps = (next != mappings_.end() && next->first < p + nbytes) ||
                        (next != mappings_.begin() && std::prev(next)->first + std::prev(next)->second > p);
  ANATOMY_INTERNAL_ASSERT(!overlaps, "simulated provider: map({}, {}) over mapped pages", ptr, nbytes);
  if (nbytes > capacity_ - counters_.used_bytes || ::mprotect(p, nbytes, PROT_READ | PROT_WRITE) != 0) {
    ++counters_.failed_maps;
    return false;
  }
  mappings_.emplace(p, nbytes);
  counters_.used_bytes += nbytes;
  counters_.mapped_bytes += nbytes;
  ++counters_.maps;
  return true;
}

void SimulatedProvider::unmap(void* ptr, size_t nbytes) {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = mappings_.find(static_cast<char*>(ptr));
  ANATOMY_INTERNAL_ASSERT(it != mappings_.end() && it->second == nbytes,
                          "simulated provider: unmap({}, {}) of a range that was not mapped", ptr, nbytes);
  // Drop the contents (a later map sees fresh pages, as a new physical allocation would) and make
  // the addresses fault again, so a use after unmap crashes the test instead of passing.
  ::madvise(ptr, nbytes, MADV_DONTNEED);
  ::mprotect(ptr, nbytes, PROT_NONE);
  mappings_.erase(it);
  counters_.used_bytes -= nbytes;
  counters_.mapped_bytes -= nbytes;
  ++counters_.unmaps;
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

void SimulatedProvider::hold_reserves() {
  std::lock_guard<std::mutex> g(mutex_);
  holding_reserves_ = true;
}

void SimulatedProvider::release_reserves() {
  {
    std::lock_guard<std::mutex> g(mutex_);
    holding_reserves_ = false;
  }
  reserve_hold_.notify_all();
}

void SimulatedProvider::wait_for_held_reserves(int n) {
  std::unique_lock<std::mutex> g(mutex_);
  reserve_hold_.wait(g, [&] { return held_reserves_ >= n; });
}

}  // namespace anatomy::alloc
