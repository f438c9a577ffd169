// The random room's launchers: the random kernels (random.cu), called by random_cuda.cpp once the arguments are
// checked and the generator's counters reserved. Element i of the output, in row-major order of
// its shape, gets the Philox block philox_element_block(seed, offset, i) (core/philox.h), mapped
// to a value exactly as backends/cpu/random_cpu.cpp maps it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/backends/cuda/common/strided_layout.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// Where the elements are: `data` is the first element; a contiguous output is walked as
// data[i], any other through layout.offsets(i).
struct RandomOutput {
  void* data = nullptr;
  DType dtype = DType::Float32;
  int64_t numel = 0;
  bool contiguous = true;
  StridedLayout<1> layout;  // used when !contiguous
};

// The stream position of element 0: the generator's seed and the first reserved counter. In a
// CUDA graph (Note [Random numbers in CUDA graphs], runtime/capture.h) the seed and the base
// offset are read from `graph_state` ({seed, base}, device memory written before each replay)
// and `offset` is the position within the graph: seed = graph_state[0], offset += graph_state[1].
struct PhiloxPosition {
  uint64_t seed = 0;
  uint64_t offset = 0;
  const uint64_t* graph_state = nullptr;
};

// from + span * u, u uniform on the dtype's grid in [0, 1); span is `to - from`, computed on the
// host as the CPU computes it. Floating dtypes only.
void launch_uniform(const RandomOutput& out, PhiloxPosition pos, double from, double span, cudaStream_t stream);
// mean + std * z, z standard normal (Box-Muller). Floating dtypes only.
void launch_normal(const RandomOutput& out, PhiloxPosition pos, double mean, double std, cudaStream_t stream);
// from + bits % range, as int64 converted to the dtype; range 0 stands for 2^64 (the raw bits).
// Every dtype.
void launch_random(const RandomOutput& out, PhiloxPosition pos, int64_t from, uint64_t range, cudaStream_t stream);

}  // namespace anatomy::cuda
