// The profiler: per-operator CPU and CUDA time through the dispatcher, as a table, a Chrome trace
// and a picture (docs/profiler.md), as torch.profiler.
//
//   profiler::Profile p({.profile_memory = true});   // recording starts
//   {
//     profiler::Range step("step");                  // a user range (and an NVTX range)
//     loss = model(x); loss.backward();
//   }
//   p.stop();                                        // device times are read back here
//   std::cout << p.table(profiler::SortBy::CudaTotal);
//   p.export_chrome_trace("trace.json");             // chrome://tracing, ui.perfetto.dev
//
// While a Profile is active on a thread, every operator that thread calls passes through the
// Profiler dispatch key, whose boxed fallback records the operator's name, its inputs' shapes and
// dtypes, the backend key that ran it, the thread, its nesting (an operator called by another
// one, or inside a Range), its host time and, for an operator on a CUDA tensor (or a factory
// whose device argument is CUDA), its device time from CUDA events recorded around it on its
// stream. The events are read only when the profile
// stops, so profiling adds no synchronization while it runs. An operator run by a backward pass
// is attributed to its autograd node. With no active Profile the key is in no call's key set and
// costs nothing.
//
// A Profile records the thread that starts it; another thread joins with a ThreadScope. One
// Profile may be active per thread at a time (a second one on the same thread is a ValueError).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

namespace anatomy::profiler {

struct ProfileOptions {
  bool record_shapes = true;    // the input shapes and dtypes of every operator
  bool profile_memory = false;  // the allocator's allocated bytes before and after every operator
  bool cuda = true;             // device time of operators on CUDA tensors (CUDA events)
};

// One recorded operator call or user range. Times are in microseconds from the profile's start.
struct Event {
  std::string name;                       // "aten::add.Tensor", or the Range's name
  bool is_range = false;                  // a profiler::Range, not an operator
  std::vector<std::string> input_shapes;  // per tensor argument: "[2, 3] float32"; "[]" for a 0-d one
  // The backend key that ran it: "CPU", "CUDA", "Meta", ... (a factory's: its device argument's)
  std::string key;
  int thread = 0;       // 1, 2, ...: threads numbered as they first record
  int depth = 0;        // 0: called by the user; n: inside n other events
  int64_t parent = -1;  // the index of the enclosing event, or -1
  double cpu_start_us = 0, cpu_end_us = 0;
  // Device time (CUDA operators): the span between events recorded on `stream` before and after
  // the call; -1 when there is none.
  int device = -1;
  uint64_t stream = 0;  // the cudaStream_t's value
  double device_start_us = -1, device_end_us = -1;
  std::string autograd_node;  // the backward node that ran it ("MulBackward0"), or empty
  uint64_t autograd_sequence_nr = 0;
  int64_t memory_delta = 0;  // bytes its device's allocator handed out minus got back during the call (profile_memory)

  double cpu_us() const { return cpu_end_us - cpu_start_us; }
  double device_us() const { return device_start_us < 0 ? 0 : device_end_us - device_start_us; }
};

enum class SortBy { CpuTotal, CudaTotal, Count };

struct Recording;
struct ThreadLog;

class Profile {
 public:
  explicit Profile(ProfileOptions options = {});  // starts recording on the calling thread
  ~Profile();                                     // stops, if still recording
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  // Starts recording again after a stop, dropping what was recorded (ValueError while recording).
  void start();
  // Stops recording on every thread (those must not be calling operators meanwhile), waits for
  // the CUDA events and turns them into device times. Nothing when already stopped.
  void stop();
  bool active() const;

  // The events in the order their calls began (per thread, threads interleaved by start time);
  // ValueError while recording.
  const std::vector<Event>& events() const;

  // torch.profiler's key_averages().table(): one row per operator (and per input shapes with
  // group_by_shape), with its count, self and total CPU time, self and total CUDA time, and with
  // profile_memory the bytes it allocated; ranges get rows too. `row_limit` < 0: every row.
  std::string table(SortBy sort_by = SortBy::CpuTotal, bool group_by_shape = false, int row_limit = -1) const;
  // The Chrome trace event format (chrome://tracing, ui.perfetto.dev): CPU events on their
  // threads, device spans on a row per stream, flows from each launch to its device span.
  std::string chrome_trace() const;
  void export_chrome_trace(const std::string& path) const;  // ValueError naming the path when it cannot be written
  // Every event with every field, as a JSON document {"events": [...]}.
  std::string to_json() const;

 private:
  friend class ThreadScope;
  std::shared_ptr<Recording> recording_;
};

// Records the calling thread into `profile` for a scope (the profile must be active).
class ThreadScope {
 public:
  explicit ThreadScope(Profile& profile);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  std::shared_ptr<Recording> recording_;
};

// A named span of the calling thread, as torch.profiler.record_function: an event of the active
// profile (operators inside it nest under it) and an NVTX range, whether or not a profile is active.
class Range {
 public:
  explicit Range(std::string name);
  ~Range();
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

 private:
  ThreadLog* log_ = nullptr;  // the thread's log it was recorded in, if any
  int64_t index_ = -1;        // its event there
  cuda::nvtx::Range nvtx_;
};

}  // namespace anatomy::profiler
