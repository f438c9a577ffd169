// Grid sizes for the element-wise kernels of this backend: 256 threads a block, and a grid
// capped so that a huge tensor is covered by a grid-stride loop instead of a giant grid. Shared
// by the .cu files, so it depends on nothing but the standard library.
#pragma once

#include <algorithm>
#include <cstdint>

namespace anatomy::cuda {

inline constexpr int kBlockThreads = 256;
// Enough blocks to fill any current GPU many times over; each thread loops beyond that.
inline constexpr int64_t kMaxBlocks = int64_t{1} << 16;

inline unsigned grid_blocks(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kBlockThreads - 1) / kBlockThreads, 1, kMaxBlocks));
}

}  // namespace anatomy::cuda
