// Max pooling's NHWC kernels over 16-byte words of channels (max_pool_nhwc.cu), which
// launch_window_max and launch_window_max_backward_gather (pooling.h) try first: each launches
// and returns true when the layout is NHWC, the channels a multiple of 16 / sizeof(dtype) and
// every pointer on a 16-byte boundary, and returns false, launching nothing, otherwise.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/backends/cuda/pooling/pooling.h"

namespace anatomy::cuda {

bool launch_window_max_nhwc(const WindowArgs& a, const void* x, void* y, int64_t* indices, cudaStream_t stream);
bool launch_window_max_backward_nhwc(const WindowArgs& a, const void* grad_output, const int64_t* indices,
                                     void* grad_input, const IndexErrorSink& sink, cudaStream_t stream);

}  // namespace anatomy::cuda
