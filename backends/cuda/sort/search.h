// Launchers of searchsorted and bucketize on CUDA (search.cu), called by search_cuda.cpp: one
// thread per value, each a binary search in its row of the sequence read in place (the CPU's
// search, dispatch/ops/sorted_search.h). Declared without fmt or core beyond dtype.h, so nvcc
// compiles it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "anatomy/backends/cuda/common/strided_layout.h"
#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// One search: `numel` values (all of dtype `dtype`, as the sequence), and per value, over the
// values' shape, the offsets of: the value (operand 0), its result (1), the start of its row of
// the sequence (2) and of the sorter (3). Each row has n elements, `sequence_stride` apart.
struct SearchValues {
  DType dtype = DType::Float32;
  const void* values = nullptr;
  const void* sequence = nullptr;
  const int64_t* sorter = nullptr;  // null: the rows are sorted
  void* out = nullptr;              // int64, or int32 with out_int32
  bool out_int32 = false;
  bool right = false;
  StridedLayout<4> layout;
  int64_t numel = 0;
  int64_t n = 0;
  int64_t sequence_stride = 0;
  int64_t sorter_stride = 0;
};

// Queues the search on `stream`. A sorter entry outside [0, n) is never used as an address (the
// search reads a clamped one; check_sorter reports it). Returns false for a dtype it does not take.
bool launch_search(const SearchValues& q, cudaStream_t stream);

// Reports the first sorter entry outside [0, n) through `sink` (IndexError at the next wait, with
// the CPU's message: Note [Bad indices on the device]); `layout` walks the sorter's `numel`
// entries, `dim` is its last dim.
void launch_check_sorter(const int64_t* sorter, const StridedLayout<1>& layout, int64_t numel, int64_t n, int64_t dim,
                         const IndexErrorSink& sink, cudaStream_t stream);

}  // namespace anatomy::cuda
