// cuda::Stream: a CUDA stream of one device, as a value (device index + cudaStream_t), and where
// streams come from: the device's default stream, a per-device pool, or a user's own stream.
//
//   cuda::Stream side = cuda::get_stream_from_pool();   // a pool stream of the current device
//   {
//     cuda::StreamGuard guard(side);                   // current_stream.h
//     c = a + b;                                       // queued on `side`
//   }
//   cuda::default_stream().wait_stream(side);          // later work on the default stream waits
//
// A Stream owns nothing: copying it copies the handle, and no Stream ever destroys one. As in
// PyTorch:
// - the default stream is CUDA's legacy default stream (cudaStreamLegacy), which waits for all
//   work on blocking streams and makes them wait for it;
// - the pool holds 32 normal and 32 high-priority streams per device, created on the device's
//   first request, handed out round-robin and never destroyed. They are non-blocking
//   (cudaStreamNonBlocking), so they run beside the default stream instead of in its queue;
// - external_stream wraps a stream the user created (and must keep alive while it is used).
#pragma once

#include <cuda_runtime_api.h>

#include <iosfwd>
#include <string>

#include "anatomy/core/device.h"

namespace anatomy::cuda {

class Event;

class Stream {
 public:
  // Wraps `handle`, a stream of CUDA device `device`, without checks or ownership (nullptr, CUDA's
  // 0 stream, stands for the legacy default stream). Touches no CUDA API.
  Stream(int device, cudaStream_t handle) : device_(device), handle_(handle ? handle : cudaStreamLegacy) {}

  int device_index() const { return device_; }
  Device device() const { return Device(DeviceType::CUDA, static_cast<Device::Index>(device_)); }
  cudaStream_t handle() const { return handle_; }
  // So a Stream passes where the runtime takes a cudaStream_t.
  operator cudaStream_t() const { return handle_; }  // NOLINT(google-explicit-constructor)
  bool is_default() const { return handle_ == cudaStreamLegacy; }

  // Waits until all work queued on the stream is done.
  void synchronize() const;
  // True when all work queued on the stream is done. Never blocks.
  bool query() const;
  // Work queued on this stream from now on waits until `event` has completed (nothing when the
  // event was never recorded). The host does not wait.
  void wait(const Event& event) const;
  // Work queued on this stream from now on waits for the work queued on `other` so far (an event
  // recorded on `other` and waited on here). Nothing when `other` is this stream.
  void wait_stream(const Stream& other) const;
  // CUDA's priority of the stream: lower numbers run first (0 is the normal priority).
  int priority() const;

  // "cuda:0 default stream" or "cuda:0 stream 0x5581c2a0f2d0".
  std::string str() const;

  bool operator==(const Stream& other) const = default;

 private:
  int device_;
  cudaStream_t handle_;
};

std::ostream& operator<<(std::ostream& os, const Stream& stream);

// The default stream of `device` (-1: the current device). Throws DeviceError when the device
// does not exist.
Stream default_stream(int device = -1);
// The next stream of `device`'s pool (-1: the current device), normal or high priority; the
// first request on a device creates its pool.
Stream get_stream_from_pool(bool high_priority = false, int device = -1);
// A stream the caller created (cudaStreamCreate...), on `device` (-1: the current device), which
// must be the device it was created on. anatomy never destroys it.
Stream external_stream(cudaStream_t handle, int device = -1);

}  // namespace anatomy::cuda
