// Launchers of the indexing kernels (index_offsets.cu, index_gather.cu, index_scatter.cu), called
// by index_cuda.cpp (reading ops) and scatter_cuda.cpp (writing ops) through index_table.h.
//
// Every indexing op is the CPU's two steps (backends/cpu/index_utils.h) on the device:
//   1. a table of int64 element offsets into the indexed tensor, one entry per index position,
//      built from the index tensor(s) by a kernel that checks every value (Note [Bad indices on
//      the device], index_error.h) and stores kBadOffset for a bad one;
//   2. gather:  out[p] = src[src_base(p) + table[offset_pos(p)]]   (a bad entry gives zero bits)
//      scatter: dst[dst_base(p) + table[offset_pos(p)]] (+)= src[p]   (nothing when the call
//      found a bad index).
// This header is compiled by nvcc and the host compiler; it includes nothing that needs fmt.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/index_error.h"
#include "anatomy/backends/cuda/strided_layout.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

// A table entry whose index was out of range (real offsets are sums of checked indices times
// strides, never this).
inline constexpr int64_t kBadOffset = INT64_MIN;

// table[i] for i in [0, n): v = index[index_layout.offsets(i)] (int32 or int64), checked against
// `size` (reported with `dim`), then
//   flat == false: v * stride, added to table[i] when accumulate (table[i] stays bad once bad);
//   flat == true:  flat_layout.offsets(v), v being a row-major position in flat_layout's shape.
struct IndexTableArgs {
  const void* index = nullptr;
  bool index_int32 = false;
  StridedLayout<1> index_layout;
  int64_t size = 0;
  int64_t dim = 0;
  int64_t stride = 0;
  bool allow_negative = false;
  bool accumulate = false;
  bool flat = false;
  StridedLayout<1> flat_layout;
};
void launch_index_table(int64_t* table, int64_t n, const IndexTableArgs& args, const IndexErrorSink& sink,
                        cudaStream_t stream);

// out[o0(i)] = src[o1(i) + table[o2(i)]] for i in [0, n), o = layout.offsets(i); bits only.
void launch_index_gather(void* out, const void* src, const int64_t* table, size_t element_size,
                         const StridedLayout<3>& layout, int64_t n, cudaStream_t stream);

// Rows: out is [outer, rows, row_elems] contiguous; out[a, r, :] = src[a * src_outer_stride +
// table[r] + (0 .. row_elems)], each source row contiguous, every table entry a multiple of
// row_stride. Copied in the widest words (up to 16 bytes) that the pointers, strides and row
// length allow.
void launch_index_gather_rows(void* out, const void* src, const int64_t* table, size_t element_size, int64_t outer,
                              int64_t rows, int64_t row_elems, int64_t src_outer_stride, int64_t row_stride,
                              cudaStream_t stream);

// dst[d0 + table[d2]] (+)= src[d1] with d = parallel.offsets(i) + serial.offsets(j), for every
// i in [0, n_parallel) (one thread each) and j in [0, n_serial) in order (within the thread).
// Returns false for a dtype it does not take.
bool launch_index_scatter(DType dtype, void* dst, const void* src, const int64_t* table,
                          const StridedLayout<3>& parallel, int64_t n_parallel, const StridedLayout<3>& serial,
                          int64_t n_serial, bool accumulate, const IndexErrorSink& sink, cudaStream_t stream);

}  // namespace anatomy::cuda
