// The conv room's launcher: one pass of a plain convolution x -> y through cuDNN's graph API
// (the backend descriptors of cudnn_graph.cpp), called by conv_cudnn.cpp, with its execution plan
// built once per problem and cached: the legacy calls (cudnnConvolutionForward and the rest)
// build and finalize a graph and an engine configuration inside every call, tens to hundreds of
// microseconds of host time that a plan kept across calls does not spend (PyTorch's convolutions
// take the same route). Note [cuDNN execution plans].
//
//   ConvSettings s{padding, stride, dilation, channels_last};
//   if (!run_conv_graph(ConvPass::Forward, x, w, y, s)) { ... the legacy API ... }
//
// Built only where cuDNN was found (ANATOMY_WITH_CUDNN).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cudnn.h>

#include "anatomy/core/tensor.h"

namespace anatomy::cuda {

// The three passes of a plain convolution x -> y with weight w: Forward writes y, BackwardData
// x (from y's gradient) and BackwardFilter w (from x and y's gradient).
enum class ConvPass : int { Forward, BackwardData, BackwardFilter };

struct ConvSettings {
  std::vector<int64_t> padding, stride, dilation;  // one per spatial dim cuDNN sees (at least 2)
  bool channels_last = false;                      // the tensors are NHWC / NDHWC in memory
};

// A tensor's sizes and strides as cuDNN takes them: at least 4 dims (a 1-d convolution's
// (N, C, L) as (N, C, 1, L)), and a size-1 dim's stride the one a dense tensor of the layout has
// there (the engine leaves it free; some cuDNN kernels read it).
struct CudnnDims {
  std::vector<int64_t> sizes, strides;
};
CudnnDims cudnn_dims(const Tensor& t, bool channels_last);

// Device memory for cuDNN from the caching allocator on the current stream.
Tensor cudnn_workspace(size_t bytes, Device device);

// The cuDNN data type of a floating dtype (fp32 for anything else).
cudnnDataType_t cudnn_data_type(DType dtype);

// A status that means "not this algorithm or plan" rather than a broken device: cuDNN's
// BAD_PARAM and NOT_SUPPORTED families (2xxx, 3xxx) and a failed allocation.
bool cudnn_try_another(cudnnStatus_t status);

// Runs the pass with the cached plan, or builds the plan on the first call: the heuristic's
// engine configurations (fp32 without TF32 keeps those that use no tensor cores; none may
// down-convert its inputs) in order, or with cudnn_benchmark() the fastest of them timed. False
// when no configuration gives a plan that runs (the caller takes the legacy API), or when
// ANATOMY_CUDNN_LEGACY_API=1 is set in the environment.
bool run_conv_graph(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y, const ConvSettings& settings);

}  // namespace anatomy::cuda
