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
#include "anatomy/cuda.h"

namespace anatomy::cuda {

// The handle of the calling thread's current stream on the current device: what ops launch on.
// On every op's path, so it is cheap: a thread-local read while the thread has only default
// streams current, plus the current device once it has set another one (cudaGetDevice, or no
// runtime call inside a DeviceGuard: Note [The device a DeviceGuard set], device.cpp). Never throws where CUDA is
// missing (the legacy default stream is the answer).
cudaStream_t current_stream();
// The handle of the calling thread's current stream on `device`, an index the caller knows to be
// valid (the caching allocator's memory provider asks on every allocation): no checks, and one
// thread-local read while the thread has only default streams current.
cudaStream_t current_stream_handle(int device) noexcept;
// current_stream(int device), set_current_stream and StreamGuard are declared in
// <anatomy/cuda.h> and implemented in current_stream.cpp.

}  // namespace anatomy::cuda
