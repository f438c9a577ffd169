// cuda::Stream, the backend's side. The class and where streams come from (default_stream, the
// per-device pools of get_stream_from_pool, external_stream) are declared in <anatomy/cuda.h>
// and implemented in stream.cpp; this header adds CUDA's runtime header, so that a Stream's
// handle is a cudaStream_t (the same type as cuda.h's StreamHandle) for the runtime calls of
// the backend's own files.
//
//   cuda::Stream side = cuda::get_stream_from_pool();   // a pool stream of the current device
//   {
//     cuda::StreamGuard guard(side);                   // current_stream.h
//     c = a + b;                                       // queued on `side`
//   }
//   cuda::default_stream().wait_stream(side);          // later work on the default stream waits
#pragma once

#include <cuda_runtime_api.h>

#include <type_traits>

#include "anatomy/cuda.h"

namespace anatomy::cuda {

static_assert(std::is_same_v<StreamHandle, cudaStream_t>, "cuda.h's StreamHandle must be CUDA's cudaStream_t");

}  // namespace anatomy::cuda
