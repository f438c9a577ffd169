// cuda::Event, the backend's side: the class is declared in <anatomy/cuda.h> and implemented in
// event.cpp; this header adds CUDA's runtime header, so that an Event's handle is a cudaEvent_t
// (the same type as cuda.h's EventHandle) for the backend's own files.
//
//   cuda::Event start(/*enable_timing=*/true), stop(/*enable_timing=*/true);
//   start.record();                 // on the current stream of the current device
//   c = a + b;
//   stop.record();
//   stop.synchronize();             // the host waits for the work before `stop`
//   float ms = start.elapsed_time(stop);
#pragma once

#include <cuda_runtime_api.h>

#include <type_traits>

#include "anatomy/backends/cuda/runtime/stream.h"
#include "anatomy/cuda.h"

namespace anatomy::cuda {

static_assert(std::is_same_v<EventHandle, cudaEvent_t>, "cuda.h's EventHandle must be CUDA's cudaEvent_t");

}  // namespace anatomy::cuda
