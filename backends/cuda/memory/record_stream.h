// cuda::record_stream: tells the device's allocator (caching or cudaMallocAsync) that a tensor's memory is also used by
// work queued on another stream than the one it was allocated on, so that freeing the tensor does not let that memory
// be handed out again before the work is done.
//
//   Tensor x = ...;                          // allocated on the current stream
//   cuda::Stream side = cuda::get_stream_from_pool();
//   side.wait_stream(cuda::current_stream(-1));
//   { cuda::StreamGuard g(side); y = x * 2; }  // x is read on `side`
//   cuda::record_stream(x, side);            // x's block waits for `side` when x is freed
//
// This is PyTorch's Tensor.record_stream, as a free function of the CUDA backend (core knows
// nothing of streams). Work on the allocation stream needs nothing: it is ordered already.
#pragma once

#include "anatomy/backends/cuda/runtime/stream.h"
#include "anatomy/core/tensor.h"
#include "anatomy/cuda.h"

// record_stream(tensor, stream) is declared in <anatomy/cuda.h> and implemented in
// record_stream.cpp. It throws DeviceError when `tensor` is not a CUDA tensor or `stream` is
// another device's. Memory the caching allocator did not make (from_blob) is the owner's to keep
// alive: nothing to do.
