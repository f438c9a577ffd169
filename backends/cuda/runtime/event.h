// cuda::Event: a marker in a stream's queue, to wait on (host or other streams) and to time
// device work with. It owns its cudaEvent_t: movable, not copyable, destroyed with the Event.
//
//   cuda::Event start(/*enable_timing=*/true), stop(/*enable_timing=*/true);
//   start.record();                 // on the current stream of the current device
//   c = a + b;
//   stop.record();
//   stop.synchronize();             // the host waits for the work before `stop`
//   float ms = start.elapsed_time(stop);
//
// As PyTorch's CUDAEvent, the cudaEvent_t is created on the first record(), on the device of
// that stream; every later record must be on a stream of the same device. Before its first
// record an event has nothing to wait for: query() is true, synchronize() and block() do
// nothing. Events are never interprocess.
#pragma once

#include <cuda_runtime_api.h>

#include "anatomy/backends/cuda/runtime/stream.h"

namespace anatomy::cuda {

class Event {
 public:
  // enable_timing: elapsed_time() works (timing costs a little on every record, so it is off by
  // default). blocking: synchronize() sleeps the host thread instead of spinning.
  explicit Event(bool enable_timing = false, bool blocking = false)
      : enable_timing_(enable_timing), blocking_(blocking) {}
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Marks the work queued on `stream` so far (the current stream of the current device when
  // omitted); query, synchronize, block and elapsed_time refer to the latest record.
  void record();
  void record(const Stream& stream);
  // True once the work before the latest record is done (or when never recorded). Never blocks.
  bool query() const;
  // The host waits until the work before the latest record is done.
  void synchronize() const;
  // Work queued on `stream` from now on waits for this event; the host does not wait.
  void block(const Stream& stream) const;
  // Milliseconds of device time between this event's record and `end`'s. Throws DeviceError
  // when either event lacks timing or was never recorded, or when either has not completed yet
  // (synchronize `end` first: this never waits).
  float elapsed_time(const Event& end) const;

  bool enable_timing() const { return enable_timing_; }
  bool blocking() const { return blocking_; }
  bool was_recorded() const { return event_ != nullptr; }
  // The device of the stream it was recorded on; -1 before the first record.
  int device_index() const { return device_; }
  cudaEvent_t handle() const { return event_; }

 private:
  void release() noexcept;

  bool enable_timing_;
  bool blocking_;
  int device_ = -1;
  cudaEvent_t event_ = nullptr;
};

}  // namespace anatomy::cuda
