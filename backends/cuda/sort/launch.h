// The sort room's launchers, declared once: sort and topk (sort.cu, topk_small.cu), called by
// sort_cuda.cpp, and searchsorted and bucketize (search.cu), called by search_cuda.cpp. Declared
// without fmt or core beyond dtype.h, so nvcc compiles it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/common/scratch.h"
#include "anatomy/backends/cuda/common/strided_layout.h"
#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// sort and topk: the rows along `dim` are sorted by key (sort_keys.cuh) with CUB's stable radix
// sorts, then the first k of each row are gathered from the input into the outputs.

// The rows of a sort or topk: `rows` rows of `n` elements along the sorted dim, and the first k
// of each row's order written out.
struct SortRows {
  DType dtype = DType::Float32;
  const void* in = nullptr;  // the input's first element
  void* values = nullptr;    // outputs (their sizes are the input's with the dim of size k)
  int64_t* indices = nullptr;
  // Over the dims other than the sorted one: where row r starts, in the input (0) and in both
  // outputs (1; values and indices have the same strides).
  StridedLayout<2> starts;
  int64_t rows = 0;
  int64_t n = 0;          // at most INT32_MAX: positions are 32-bit
  int64_t k = 0;          // 1 <= k <= n
  int64_t in_stride = 0;  // along the sorted dim
  int64_t out_stride = 0;
  bool descending = false;
  bool sorted = true;  // false: the k picked elements in index order (topk only)
};

// Queues the whole sort on `stream`. Returns false for a dtype it does not take.
bool launch_sort_rows(const SortRows& q, const ScratchFn& scratch, cudaStream_t stream);

// topk of at most kSmallTopkMaxK elements from each of at least kSmallTopkMinRows rows of at
// least kSmallTopkMinLength: one block a row, reading it once (topk_small.cu), instead of
// sorting every row. Fewer rows would leave most of the GPU idle, shorter ones sort fast anyway.
inline constexpr int64_t kSmallTopkMaxK = 16;
inline constexpr int64_t kSmallTopkMinRows = 32;
inline constexpr int64_t kSmallTopkMinLength = 1024;

inline bool small_topk_fits(const SortRows& q) {
  return q.k <= kSmallTopkMaxK && q.k < q.n && q.rows >= kSmallTopkMinRows && q.n >= kSmallTopkMinLength;
}

// Queues such a topk on `stream`. Returns false for a dtype it does not take.
bool launch_topk_small(const SortRows& q, cudaStream_t stream);

// searchsorted and bucketize: one thread per value, each a binary search in its row of the
// sequence read in place (the CPU's search, dispatch/ops/sorted_search.h).

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
