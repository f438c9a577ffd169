// The stream CUDA ops run on: each thread has a current stream per device, the device's default
// stream (the legacy default stream) until the thread sets another. Every op makes its tensors'
// device current (DeviceGuard) and launches on current_stream(); the caching allocator
// associates each block with the current stream of its device, so a block is reused in that
// stream's order.
//
//   cuda::Stream s = cuda::get_stream_from_pool();
//   {
//     cuda::StreamGuard guard(s);   // s's device becomes current, and s its current stream
//     c = a + b;                    // queued on s
//   }                               // the previous stream and device are current again
//
// A thread starts with the default stream on every device, so a new std::thread does not
// inherit its parent's streams (as in PyTorch).
#pragma once

#include <cuda_runtime_api.h>

#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/runtime/stream.h"

namespace anatomy::cuda {

// The handle of the calling thread's current stream on the current device: what ops launch on.
// On every op's path, so it is cheap: a thread-local read while the thread has only default
// streams current, plus the current device once it has set another one (cudaGetDevice, or no
// runtime call inside a DeviceGuard: Note [The device a DeviceGuard set], device.cpp). Never throws where CUDA is missing (the legacy default stream is the answer).
cudaStream_t current_stream();
// The handle of the calling thread's current stream on `device`, an index the caller knows to be
// valid (the caching allocator's memory provider asks on every allocation): no checks, and one
// thread-local read while the thread has only default streams current.
cudaStream_t current_stream_handle(int device) noexcept;
// The calling thread's current stream of `device` (-1: the current device). Reads a thread-local
// for an explicit index. Throws DeviceError when the device does not exist.
Stream current_stream(int device);
// Makes `stream` the calling thread's current stream of its device; the current device stays.
void set_current_stream(const Stream& stream);

// Makes a stream current for a scope, as PyTorch's CUDAStreamGuard: its device becomes the
// current device and it becomes that device's current stream; on exit both are restored.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

  // The stream of the guarded device that was current before the guard.
  const Stream& original_stream() const { return original_; }
  const Stream& current() const { return current_; }

 private:
  DeviceGuard device_guard_;
  Stream original_;
  Stream current_;
};

}  // namespace anatomy::cuda
