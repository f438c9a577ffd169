// What a Profile records while it is active (profiler.h): one log per thread, filled by the
// Profiler dispatch key's fallback and by Ranges (recording.cpp), merged into one list of events
// when the profile stops. Internal to profiler/.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "anatomy/cuda.h"
#include "anatomy/profiler/profiler.h"

namespace anatomy::profiler {

using Clock = std::chrono::steady_clock;

// The CUDA events around one operator, turned into device times when the profile stops. Spans
// outlive their profile in a pool (span_pool.cpp), so that a profile records events made by an
// earlier one instead of making and destroying two per operator.
struct DeviceSpan {
  size_t event = 0;  // index in its thread's log
  int device = -1;   // whose streams its events are recorded on (fixed by their first record)
  cuda::Event start{/*enable_timing=*/true}, end{/*enable_timing=*/true};
  // Whether `end` was recorded in this profile: an operator that threw may leave it holding an
  // earlier profile's record, and its span then has no device time.
  bool ended = false;
  // When `end` was recorded, counted per thread log: an enclosing operator's span begins before
  // its callees' and ends after them, so the spans' order is not the order of their end events.
  uint64_t end_order = 0;
};

// A span for `device`: one a finished profile left in the pool, or a new one.
std::unique_ptr<DeviceSpan> take_span(int device);
// Puts the spans back in the pool (empties `spans`); past the pool's bound they are destroyed.
void return_spans(std::vector<std::unique_ptr<DeviceSpan>>& spans);

// One tensor argument's shape, kept as numbers while recording and written out when the profile
// stops (formatting costs more than the rest of an event).
struct RawShape {
  uint32_t first_dim;  // in ThreadLog::dims
  uint32_t ndim;
  DType dtype;
};

struct ThreadLog {
  int thread = 0;
  std::vector<Event> events;
  // Per event, kept apart from it while recording: the operator's name (the dispatcher's own
  // string, which lives as long as the program; nullptr for a range, whose Event has its name)
  // and its shapes (a range [first, first + count) of `shapes`).
  std::vector<const std::string*> op_names;
  std::vector<std::pair<uint32_t, uint32_t>> event_shapes;
  std::vector<RawShape> shapes;
  std::vector<int64_t> dims;
  std::vector<int64_t> open;  // the events begun and not yet ended, innermost last
  std::vector<std::unique_ptr<DeviceSpan>> spans;
  uint64_t spans_ended = 0;  // end events recorded so far (DeviceSpan::end_order)
};

struct Recording {
  ProfileOptions options;
  Clock::time_point start;
  std::atomic<bool> active{false};
  std::mutex mutex;  // logs, references
  std::vector<std::unique_ptr<ThreadLog>> logs;
  // Per device: an event recorded when the device's first span began, with its host time, from
  // which device times are placed on the profile's clock.
  struct Reference {
    cuda::Event event{/*enable_timing=*/true};
    double host_us = 0;
  };
  std::map<int, std::unique_ptr<Reference>> references;
  std::vector<Event> merged;  // after stop

  double now_us() const { return std::chrono::duration<double, std::micro>(Clock::now() - start).count(); }
  ThreadLog& new_log();  // under `mutex`
};

// The calling thread's recording, or nullptr (recording.cpp).
Recording* thread_recording();
ThreadLog* thread_log();
// Makes the calling thread record into `r` (its dispatch key set includes Profiler), or stops it.
void attach_thread(const std::shared_ptr<Recording>& r);
void detach_thread();

// Begins an event on the calling thread's log (nesting under the innermost open one) and returns
// its index: an operator's (its name is the dispatcher's string) or a range's; ends it.
int64_t begin_operator(Recording& r, ThreadLog& log, const std::string& op_name);
int64_t begin_range(Recording& r, ThreadLog& log, std::string name);
void end_event(Recording& r, ThreadLog& log, int64_t index);

// Waits for every span's events and fills the device times; merges the logs (recording.cpp).
void finish(Recording& r);

}  // namespace anatomy::profiler
