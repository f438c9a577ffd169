// The channel_norm room's launchers: batch_norm forward and backward over a dense (N, C, S)
// input, contiguous or with the channels innermost (declared here, defined in the .cu files,
// called by channel_norm_cuda.cpp).
#pragma once

#include <cuda_runtime_api.h>
#include <cstdint>

#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// A dense input of N x C x S elements: (N, C, S) row-major, or (N, S, C) when channels_last.
struct ChannelShape {
  int64_t N = 0, C = 0, S = 0;
  bool channels_last = false;
};

// The scratch elements (of the computation dtype: fp32, fp64 for fp64) a launch on an `input`
// tensor of this dtype needs: the per-split partial sums of each channel, and five per-channel
// rows. The split count follows the input's element size (a channels_last fp16 input is read
// 8 channels per load, fp32 4), so it is the input's dtype that sizes the scratch, not the
// computation's.
int64_t batch_norm_scratch(DType input, const ChannelShape& shape);

// `dtype` pointers: input and output. Every other pointer is to C elements of the computation
// dtype, contiguous; weight and bias null when absent. running_mean / running_var: read in eval,
// updated in place when training and not null (momentum; the variance unbiased).
struct BatchNormForwardBuffers {
  const void* input = nullptr;
  void* output = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  void* running_mean = nullptr;
  void* running_var = nullptr;
  void* save_mean = nullptr;
  void* save_invstd = nullptr;
  void* batch_var = nullptr;  // the batch's biased variance (training)
  void* scratch = nullptr;
};

// Floating dtypes; N * S > 0 and C > 0.
void launch_batch_norm_forward(DType dtype, const ChannelShape& shape, const BatchNormForwardBuffers& b, bool training,
                               double momentum, double eps, cudaStream_t stream);

// grad, input and grad_input of `dtype` in the shape's layout; the others of the computation
// dtype: weight (null: ones), mean and invstd (the statistics the forward used), grad_weight
// and grad_bias (null: not wanted), scratch as above.
struct BatchNormBackwardBuffers {
  const void* grad = nullptr;
  const void* input = nullptr;
  const void* weight = nullptr;
  const void* mean = nullptr;
  const void* invstd = nullptr;
  void* grad_input = nullptr;
  void* grad_weight = nullptr;
  void* grad_bias = nullptr;
  void* scratch = nullptr;
};

// train: the statistics came from the batch (dx gets their terms). Floating dtypes; N * S > 0,
// C > 0.
void launch_batch_norm_backward(DType dtype, const ChannelShape& shape, const BatchNormBackwardBuffers& b, bool train,
                                cudaStream_t stream);

}  // namespace anatomy::cuda
