// The CUDA allocator of the foundation: each block comes straight from cudaMalloc on the current
// device and goes back with cudaFree. It is registered for DeviceType::CUDA when the library
// loads, but touches CUDA only on the first allocation. The caching allocator (alloc/) replaces
// it; until then every allocation and free costs a driver call, and cudaFree synchronizes.
#pragma once

#include "anatomy/core/allocator.h"

namespace anatomy::cuda {

Allocator* cuda_allocator();

}  // namespace anatomy::cuda
