// The pooling room's launchers, declared once: the pooling and upsampling CUDA kernels
// (pooling.cu), called by pooling_cuda.cpp with the CPU's plan (dispatch/ops/pooling_rules.h):
// dense inputs and results in the plan's layout, NCHW or NHWC.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/core/dtype.h"
#include "anatomy/dispatch/ops/pooling_windows.h"

namespace anatomy::cuda {

struct WindowArgs {
  pooling::Window2d window;
  int64_t batch = 0, channels = 0;
  bool channels_last = false;
  DType dtype = DType::Float32;
};

// y = the windows' weighted sums of x (average, adaptive average, nearest, bilinear).
void launch_window_sum(const WindowArgs& a, const void* x, void* y, cudaStream_t stream);
// Adds each grad_output value, weighted, to the input pixels its window read: `grad_input` is a
// zeroed buffer of the computation type (float for fp16, bf16 and fp32; double for fp64).
void launch_window_sum_backward(const WindowArgs& a, const void* grad_output, void* grad_input, cudaStream_t stream);
// y and the int64 flat H * W index of each window's maximum (NaN wins), for floating and integer
// dtypes.
void launch_window_max(const WindowArgs& a, const void* x, void* y, int64_t* indices, cudaStream_t stream);
// Max pooling's backward gathers (one thread per input element, over the windows that can hold
// it) where at most kMaxGatherWindows windows can, and no axis spans more than kMaxGatherSpan
// outputs; it scatters (one thread per output, atomics into a zeroed buffer) otherwise. The
// gather reads each window's index where the window can hold the element: an index that names a
// pixel outside its own window adds nothing (as in PyTorch's CUDA kernels; the CPU and the
// scatter add it where it points).
inline constexpr int64_t kMaxGatherSpan = 8, kMaxGatherWindows = 16;
bool window_max_backward_gathers(const WindowArgs& a);
// grad_input (the result: the input's sizes, layout and dtype) = the sum of grad_output over the
// windows whose index names each element; an index outside the plane is reported through `sink`.
void launch_window_max_backward_gather(const WindowArgs& a, const void* grad_output, const int64_t* indices,
                                       void* grad_input, const IndexErrorSink& sink, cudaStream_t stream);
// Adds grad_output at the indices into `grad_input`, a zeroed buffer of the computation type; an
// index outside the plane is reported through `sink` and skipped.
void launch_window_max_backward(const WindowArgs& a, const void* grad_output, const int64_t* indices, void* grad_input,
                                const IndexErrorSink& sink, cudaStream_t stream);

// Internal to the room: max pooling's NHWC kernels over 16-byte words of channels
// (max_pool_nhwc.cu), which launch_window_max and launch_window_max_backward_gather (pooling.cu)
// try first: each launches and returns true when the layout is NHWC, the channels a multiple of
// 16 / sizeof(dtype) and every pointer on a 16-byte boundary, and returns false, launching
// nothing, otherwise. pooling_cuda.cpp does not call them.
bool launch_window_max_nhwc(const WindowArgs& a, const void* x, void* y, int64_t* indices, cudaStream_t stream);
bool launch_window_max_backward_nhwc(const WindowArgs& a, const void* grad_output, const int64_t* indices,
                                     void* grad_input, const IndexErrorSink& sink, cudaStream_t stream);

}  // namespace anatomy::cuda
