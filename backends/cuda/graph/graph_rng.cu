// The kernel that hands a CUDA graph's random ops this replay's seed and base offset (Note
// [Random numbers in CUDA graphs], runtime/capture.h): one thread writes {seed, base} on the
// replay stream, ahead of the graph's launch on the same stream.
#include "anatomy/backends/cuda/graph/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

__global__ void write_philox_state_kernel(uint64_t* state, uint64_t seed, uint64_t base) {
  state[0] = seed;
  state[1] = base;
}

}  // namespace

void launch_write_philox_state(uint64_t* state, uint64_t seed, uint64_t base, cudaStream_t stream) {
  write_philox_state_kernel<<<1, 1, 0, stream>>>(state, seed, base);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace anatomy::cuda
