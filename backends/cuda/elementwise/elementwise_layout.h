// A building block elementwise/ shares with the rooms that include elementwise.cuh (not a launcher:
// the room's is launch.h).
// What an element-wise CUDA kernel receives from the host: the operands' pointers, whether the
// plan is one flat contiguous run, and otherwise the plan's loop shape (innermost dim first) with
// every operand's byte strides, passed by value with the launch. A CPU scalar input travels as
// its value.
//
// Compiled by nvcc and the host compiler: nothing here needs fmt or the rest of core.
// make_elementwise_args (elementwise_cuda.cpp, host only) builds one from an IterationPlan.
#pragma once

#include <cstdint>

#include "anatomy/backends/cuda/common/strided_layout.h"
#include "anatomy/core/macros.h"

namespace anatomy::cuda {

// N operands: the output first, then the inputs.
template <int N>
struct ElementwiseLayout {
  int ndim = 0;
  int64_t sizes[kMaxDims];            // innermost first
  int64_t byte_strides[N][kMaxDims];  // per operand, innermost first

  template <typename Index>
  ANATOMY_HOST_DEVICE void byte_offsets(Index i, Index (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    for (int d = 0; d < ndim; ++d) {
      const Index size = static_cast<Index>(sizes[d]);
      const Index idx = i % size;
      i /= size;
      for (int k = 0; k < N; ++k) out[k] += idx * static_cast<Index>(byte_strides[k][d]);
    }
  }
};

// What the kernel reads its inputs from: device memory, or for a CPU scalar (Note [CPU scalars
// in device plans], core/iteration_plan.h) the value itself, which came with the launch.
template <typename In, int NIn>
struct ElementwiseInputs {
  const In* ptr[NIn];
  In scalar[NIn];
  bool is_scalar[NIn];
};

template <int NIn>
struct ElementwiseArgs {
  void* output = nullptr;
  const void* inputs[NIn] = {};  // null for a CPU scalar
  // Input k is a CPU scalar: its value, in the kernel's input dtype, is the first bytes of
  // scalar_bits[k] (read on the host; the device never sees the host pointer).
  bool is_scalar[NIn] = {};
  uint64_t scalar_bits[NIn] = {};
  int64_t numel = 0;
  bool contiguous = true;  // every operand one flat run of numel elements (CPU scalars aside)
  bool use_32bit = true;   // every byte offset fits in 32 bits
  ElementwiseLayout<NIn + 1> layout;
};

}  // namespace anatomy::cuda
