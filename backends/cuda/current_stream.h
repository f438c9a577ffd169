// The stream CUDA ops run on. For now that is the legacy default stream of the current device,
// which orders every op after the ones before it, like a single queue. The streams issue
// replaces this with a per-device, per-thread current stream; every op already asks here.
#pragma once

#include <cuda_runtime_api.h>

namespace anatomy::cuda {

inline cudaStream_t current_stream() { return cudaStreamLegacy; }

}  // namespace anatomy::cuda
