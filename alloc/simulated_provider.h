// SimulatedProvider: a MemoryProvider over host memory with a fixed capacity, and streams and
// events whose completion the test decides, so that every allocator policy (reuse across streams,
// record_stream, the out-of-memory ladder) is tested deterministically without a GPU. Virtual
// memory (expandable segments) is a host address range reserved with no access, whose pages are
// made accessible as they are mapped; mapped bytes count against the capacity as reserved ones do.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <unordered_map>

#include "anatomy/alloc/memory_provider.h"

namespace anatomy::alloc {

class SimulatedProvider final : public MemoryProvider {
 public:
  // `capacity` bytes of "device" memory; a reservation that would go beyond it fails the way a
  // device out-of-memory does (reserve returns nullptr).
  explicit SimulatedProvider(size_t capacity, Device device = Device(DeviceType::PrivateUse1, 0));
  ~SimulatedProvider() override;
  SimulatedProvider(const SimulatedProvider&) = delete;
  SimulatedProvider& operator=(const SimulatedProvider&) = delete;

  Device device() const override { return device_; }
  void* reserve(size_t nbytes) override;
  void release(void* ptr, size_t nbytes) override;
  bool supports_virtual_memory() const override { return virtual_memory_; }
  size_t page_size() const override { return kPageSize; }
  void* reserve_address(size_t nbytes) override;
  void release_address(void* ptr, size_t nbytes) override;
  bool map(void* ptr, size_t nbytes) override;
  void unmap(void* ptr, size_t nbytes) override;
  EventId create_event() override;
  void record_event(EventId event, StreamId stream) override;
  bool query_event(EventId event) override;
  void destroy_event(EventId event) override;
  void synchronize() override;  // completes every recorded event
  StreamId current_stream() const override;
  size_t total_memory() const override { return capacity_; }
  size_t free_memory() const override;

  // The granularity of map(), as CUDA's on current GPUs.
  static constexpr size_t kPageSize = size_t{2} << 20;
  // Test control: a device without virtual memory (the allocator then refuses expandable segments).
  void set_supports_virtual_memory(bool supported) { virtual_memory_ = supported; }

  // Test control: from now on reserve() places each segment at a random place (2 MiB aligned,
  // drawn from `seed`) of a host address range of eight times the capacity, so segments come in
  // no address order at all, unlike the host allocator's (which tends to hand out ascending or
  // descending addresses). A policy whose choices depend on raw addresses then gives different
  // results per seed. Call it before the first reservation.
  void scatter_segments(uint64_t seed);

  // The calling thread's current stream (thread-local, shared by all simulated providers).
  static void set_current_stream(StreamId stream);

  // Test controls: the work before `event` finishes; all work queued so far on `stream` finishes.
  void complete(EventId event);
  void complete_all(StreamId stream);
  // Recorded events not yet completed (all streams, or one).
  size_t pending_events() const;
  size_t pending_events(StreamId stream) const;

  // Test controls for a slow reservation (a cudaMalloc that waits on the driver): while held,
  // reserve() calls wait inside the provider, before deciding anything, until release_reserves().
  // The other calls go on meanwhile. wait_for_held_reserves(n) returns once n calls are waiting.
  void hold_reserves();
  void release_reserves();
  void wait_for_held_reserves(int n = 1);

  struct Counters {
    int64_t reserves = 0;          // successful reserve() calls
    int64_t releases = 0;          // release() calls
    int64_t failed_reserves = 0;   // reserve() calls refused for lack of capacity
    size_t used_bytes = 0;         // reserved and not released, plus mapped and not unmapped
    int64_t address_reserves = 0;  // reserve_address() calls that succeeded
    int64_t address_releases = 0;  // release_address() calls
    int64_t maps = 0;              // map() calls that succeeded
    int64_t unmaps = 0;            // unmap() calls
    int64_t failed_maps = 0;       // map() calls refused for lack of capacity
    size_t mapped_bytes = 0;       // mapped and not unmapped (part of used_bytes)
    int64_t live_events = 0;       // created and not destroyed
    int64_t synchronizes = 0;
  };
  Counters counters() const;

 private:
  struct EventState {
    StreamId stream = -1;  // -1: created, never recorded (queries as complete, as CUDA does)
    bool done = true;
  };
  const size_t capacity_;
  const Device device_;
  mutable std::mutex mutex_;  // the test thread completes events while the allocator queries them
  // hold_reserves: signalled when a reserve() starts waiting and when the hold lifts.
  std::condition_variable reserve_hold_;
  bool holding_reserves_ = false;
  int held_reserves_ = 0;                // reserve() calls waiting in the hold
  void* place_scattered(size_t nbytes);  // with mutex_ held
  std::unordered_map<EventId, EventState> events_;
  std::unordered_map<void*, size_t> live_;  // what was reserved, to catch bad releases
  std::map<char*, size_t> ranges_;          // reserved address ranges, to catch bad maps
  std::map<char*, size_t> mappings_;        // mapped ranges, to catch overlaps and bad unmaps
  // scatter_segments: the range segments are placed in (nullptr: the host allocator places
  // them), its random source, and the placed segments by start (with their page-rounded spans).
  char* scatter_range_ = nullptr;
  size_t scatter_size_ = 0;
  std::mt19937_64 scatter_rng_;
  std::map<char*, size_t> scattered_;
  bool virtual_memory_ = true;
  EventId next_event_ = 1;
  Counters counters_;
};

}  // namespace anatomy::alloc
