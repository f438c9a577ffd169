// ScratchFn: how a launcher that needs device memory of its own (CUB's temporary storage, keys
// and positions to sort) gets it from its caller, so that the .cu files allocate nothing
// themselves. The host side hands out blocks of the caching allocator (ScratchBlocks,
// cub_temp.h). Compiled by nvcc and the host compiler; includes nothing that needs fmt.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace anatomy::cuda {

// Device memory of at least `bytes` bytes, usable on the launch's stream until the caller returns.
using ScratchFn = std::function<void*(size_t bytes)>;

// Room for `count` elements of T (at least one).
template <typename T>
T* scratch_of(const ScratchFn& scratch, int64_t count) {
  return static_cast<T*>(scratch(static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(T)));
}

}  // namespace anatomy::cuda
