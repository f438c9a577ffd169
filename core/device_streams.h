// DeviceStreams: what a device backend with streams (CUDA) tells the device-agnostic parts of
// anatomy about them, registered per device type like the allocators (core/allocator.h). The
// autograd engine uses it to run each node's backward on the stream its forward ran on
// (docs/autograd.md, "CUDA streams") without including a backend.
//
// A stream is named by a 64-bit id that only its backend interprets (CUDA: the cudaStream_t
// handle); 0 is the device's default stream.
#pragma once

#include <cstdint>

#include "anatomy/core/device.h"

namespace anatomy {

class Tensor;

struct DeviceStreams {
  // The id of the calling thread's current stream of `device` (an explicit index).
  uint64_t (*current_stream)(Device device);
  // Makes stream `id` of `device` the calling thread's current stream of that device (the
  // current device stays). Must not throw for an id that current_stream returned.
  void (*set_current_stream)(Device device, uint64_t id) noexcept;
  // Work queued on stream `waiter` from now on waits for the work queued on stream `producer` so
  // far (an event recorded on one, waited on by the other); the host does not wait.
  void (*wait_stream)(Device device, uint64_t waiter, uint64_t producer);
  // `tensor`'s memory is also used by work queued on stream `id` of its device: when the tensor
  // is freed, its allocator must not hand the memory out again before that work is done (the
  // caching allocator's record_stream). Memory the allocator did not make is left alone.
  void (*record_stream)(const Tensor& tensor, uint64_t id);
  // Whether the calling thread's current stream of `device` is being captured into a graph (CUDA
  // graphs): work that must not be frozen into a replay (AdamW's host-side step count) checks it.
  // nullptr: never.
  bool (*is_capturing)(Device device);
};

// The streams of a device type; nullptr when its backend registered none (CPU, Meta, a build
// without CUDA). A load on every call: callers check it before any other work.
const DeviceStreams* device_streams(DeviceType type);
// Installs `streams` (not owned; static storage) for `type`.
void set_device_streams(DeviceType type, const DeviceStreams* streams);

// Makes a stream current for a scope and restores the previous one on exit; nothing at all
// when `device` has no registered streams (a CPU device).
class DeviceStreamGuard {
 public:
  DeviceStreamGuard(Device device, uint64_t id) : streams_(device_streams(device.type())), device_(device) {
    if (streams_ == nullptr) return;
    original_ = streams_->current_stream(device);
    if (original_ != id) streams_->set_current_stream(device, id);
  }
  ~DeviceStreamGuard() {
    if (streams_ != nullptr) streams_->set_current_stream(device_, original_);
  }
  DeviceStreamGuard(const DeviceStreamGuard&) = delete;
  DeviceStreamGuard& operator=(const DeviceStreamGuard&) = delete;

 private:
  const DeviceStreams* streams_;
  Device device_;
  uint64_t original_ = 0;
};

}  // namespace anatomy
