// Reservations: what the caching allocator holds from its provider, as the segments part and the
// expandable segments beside it count it: reserved bytes (plain segments and mapped pages), the
// most ever reserved at once, bytes being reserved without the lock, and the numbering of
// segments. per_process_memory_fraction is checked here. Not locked: called under the
// allocator's lock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "anatomy/alloc/alloc_conf.h"
#include "anatomy/alloc/memory_provider.h"

namespace anatomy::alloc {

class Reservations {
 public:
  // Both must outlive it; `conf` is the allocator's, read as it is at each check.
  Reservations(const MemoryProvider& provider, const AllocConf& conf) : provider_(provider), conf_(conf) {}

  size_t total() const { return total_; }
  // The most ever reserved at once; reset_peak_stats leaves it (Note [Releasing before a new peak]).
  size_t high_water() const { return high_water_; }
  void add(size_t nbytes) {
    total_ += nbytes;
    high_water_ = std::max(high_water_, total_);
  }
  void remove(size_t nbytes) { total_ -= nbytes; }

  // release_lock_on_cudamalloc: `nbytes` being reserved by a thread that dropped the lock for it,
  // and how many such reservations began (Note [Reserving without the lock]).
  size_t in_flight() const { return in_flight_; }
  uint64_t unlocked_reserves() const { return unlocked_reserves_; }
  void begin_unlocked(size_t nbytes) {
    ++unlocked_reserves_;
    in_flight_ += nbytes;
  }
  void end_unlocked(size_t nbytes) { in_flight_ -= nbytes; }

  // The next segment's number (Note [Free blocks in segment order]).
  uint64_t next_segment() { return ++segments_made_; }

  // What per_process_memory_fraction allows.
  double allowed_memory() const {
    return conf_.per_process_memory_fraction * static_cast<double>(provider_.total_memory());
  }
  // Would reserving `nbytes` more pass per_process_memory_fraction? Reservations other threads
  // are making without the lock count as made.
  bool exceeds_memory_fraction(size_t nbytes) const {
    return conf_.per_process_memory_fraction < 1.0 &&
           static_cast<double>(total_ + in_flight_ + nbytes) > allowed_memory();
  }

 private:
  const MemoryProvider& provider_;
  const AllocConf& conf_;
  size_t total_ = 0;
  size_t high_water_ = 0;
  size_t in_flight_ = 0;
  uint64_t unlocked_reserves_ = 0;
  uint64_t segments_made_ = 0;
};

}  // namespace anatomy::alloc
