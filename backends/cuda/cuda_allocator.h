// The CUDA device allocator: one caching allocator (alloc/caching_allocator.h, PyTorch's policy)
// per device over a CudaMemoryProvider, created on the device's first allocation and configured
// from ANATOMY_CUDA_ALLOC_CONF (or PYTORCH_CUDA_ALLOC_CONF). It is registered for
// DeviceType::CUDA when the library loads and touches CUDA only on the first allocation. At
// process exit the cached, unused segments go back to the driver (so leak checkers see only
// tensors that are still alive).
#pragma once

#include <cstdint>
#include <string>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/core/allocator.h"

namespace anatomy::cuda {

Allocator* cuda_allocator();

// The caching allocator of `device` (-1: the current device). Throws DeviceError where no GPU is.
alloc::CachingAllocator& caching_allocator(int device = -1);

// As torch.cuda's functions of the same names, for `device` (-1: the current device).
alloc::MemoryStats memory_stats(int device = -1);
int64_t memory_allocated(int device = -1);  // bytes of the blocks handed out
int64_t memory_reserved(int device = -1);   // bytes held from the driver
void reset_peak_memory_stats(int device = -1);
// memory_stats(device) as a table for people, like torch.cuda.memory_summary().
std::string memory_summary(int device = -1);
// Gives every cached segment with no block in use back to the driver, on every device that has
// an allocator.
void empty_cache();

}  // namespace anatomy::cuda
