// The host side of an operator that writes by index (Note [Bad indices on the device],
// index_error.h): its per-call flag, a zeroed int32 on the device that its checking kernel sets
// and its writing kernel tests.
//
//   Tensor flag = make_call_flag(device);
//   IndexErrorSink sink = index_error_sink(device, "scatter_", flag.data_ptr<int32_t>());
//   launch_check(..., sink); launch_write(..., sink);   // the write skips itself when flag is set
//
// The tensor comes from the caching allocator and is zeroed on the current stream, so it may be
// dropped as soon as the kernels are queued.
#pragma once

#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/core/tensor.h"

namespace anatomy::cuda {

Tensor make_call_flag(int device);

}  // namespace anatomy::cuda
