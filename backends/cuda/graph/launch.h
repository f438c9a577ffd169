// The graph room's launcher: graph_rng.cu's kernel, which writes a graph's {seed, base offset}
// before a replay (called by graph.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace anatomy::cuda {

void launch_write_philox_state(uint64_t* state, uint64_t seed, uint64_t base, cudaStream_t stream);

}  // namespace anatomy::cuda
