// The index room's launchers: gathers and scatters, nonzero and masked_select, one_hot (declared
// here, defined in the .cu files, called by the *_cuda.cpp files and index_table.cpp).
#pragma once

#include <cuda_runtime_api.h>
#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/common/scratch.h"
#include "anatomy/backends/cuda/common/strided_layout.h"
#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/core/dtype.h"
#include "anatomy/dispatch/ops/scatter_functors.h"

// ---- index -------------------------------------------------------------------------------------
// Launchers of the indexing kernels (index_offsets.cu, index_gather.cu, index_scatter.cu,
// index_scatter_sorted.cu), called by index_cuda.cpp (reading ops) and scatter_cuda.cpp
// (writing ops) through index_table.h.
//
// Every indexing op is the CPU's two steps (backends/cpu/index_utils.h) on the device:
//   1. a table of int64 element offsets into the indexed tensor, one entry per index position,
//      built from the index tensor(s) by a kernel that checks every value (Note [Bad indices on
//      the device], index_error.h) and stores kBadOffset for a bad one;
//   2. gather:  out[p] = src[src_base(p) + table[offset_pos(p)]]   (a bad entry gives zero bits)
//      scatter: dst[dst_base(p) + table[offset_pos(p)]] (+, *, max, min)= src[p]   (nothing when the call
//      found a bad index).
// This header is compiled by nvcc and the host compiler; it includes nothing that needs fmt.

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

// dst[d0 + table[d2]] = scatter_combine<mode>(dst[...], src[d1]) with d = parallel.offsets(i) +
// serial.offsets(j), for every i in [0, n_parallel) (one thread each) and j in [0, n_serial) in
// order (within the thread).
// Returns false for a dtype it does not take.
bool launch_index_scatter(DType dtype, void* dst, const void* src, const int64_t* table,
                          const StridedLayout<3>& parallel, int64_t n_parallel, const StridedLayout<3>& serial,
                          int64_t n_serial, ScatterMode mode, const IndexErrorSink& sink, cudaStream_t stream);

// The serial walks above leave the GPU idle when the parallel positions are few: a 1-D
// index_add_ of 16M values is one thread's 16M steps. A walk of at most kSortedScatterMaxParallel
// parallel positions (a few percent of the threads a GPU keeps resident) and at least
// kSortedScatterMinSerial serial ones (shorter walks finish before a sort would) takes the sorted
// path instead (Note [Sorted scatter on CUDA], index_scatter_sorted.cu), whose positions are
// 32-bit.
inline constexpr int64_t kSortedScatterMaxParallel = 8192;
inline constexpr int64_t kSortedScatterMinSerial = 256;
inline bool sorted_scatter_fits(int64_t n_parallel, int64_t n_serial) {
  return n_parallel <= kSortedScatterMaxParallel && n_serial >= kSortedScatterMinSerial &&
         n_parallel * n_serial < (int64_t{1} << 32);
}

// The scatter of launch_index_scatter for a walk that sorted_scatter_fits, whose targets lie in
// [0, dst_extent] elements from dst (every stride of dst non-negative): each element of dst is
// written once, with its values combined in the CPU's order in a fixed association (the CPU's
// bits except for floating sums and products). Device memory from `scratch`; nothing waits.
// Returns false for a dtype it does not take.
bool launch_index_scatter_sorted(DType dtype, void* dst, const void* src, const int64_t* table,
                                 const StridedLayout<3>& parallel, int64_t n_parallel, const StridedLayout<3>& serial,
                                 int64_t n_serial, uint64_t dst_extent, ScatterMode mode, const IndexErrorSink& sink,
                                 const ScratchFn& scratch, cudaStream_t stream);

}  // namespace anatomy::cuda

// ---- select ------------------------------------------------------------------------------------
// Launchers of nonzero and masked_select (select.cu), called by select_cuda.cpp. Both have a
// result size that depends on the data, so each runs in two steps: count (a CUB reduction of the
// selection flags into one int64 on the device, which the host then reads), and, once the result
// is allocated, select (CUB's order-preserving DeviceSelect::Flagged).
//
// The CUB calls need temporary storage, which comes from the caching allocator on the host side.
// So every launcher here works like CUB's own entry points: called with temp == nullptr it only
// writes the number of bytes it needs into temp_bytes; called again with that much memory it
// queues the work on `stream`.
//
// Elements are read as raw words of their element size (1, 2, 4 or 8 bytes): an element is
// nonzero when its bits, with the sign bit cleared for floating dtypes (so -0 is zero and NaN is
// not), are not all zero, which is convert<bool> of every dtype.
//
// Each operand is one pointer and one stride: element i (row-major) is at data + i * stride.
// CUB copies its input iterators freely, so they must stay small; an operand that is not one
// strided run (select_cuda.cpp) is made contiguous first.

namespace anatomy::cuda {

// nonzero: *count = the number of nonzero elements among data[i * stride], i in [0, numel).
void nonzero_count(void* temp, size_t& temp_bytes, const void* data, int64_t stride, size_t element_size, bool floating,
                   int64_t numel, int64_t* count, cudaStream_t stream);
// nonzero: positions[0..count) = the row-major indices i of the nonzero elements, in order;
// *num_selected gets the count again (CUB writes it; nobody reads it).
void nonzero_positions(void* temp, size_t& temp_bytes, const void* data, int64_t stride, size_t element_size,
                       bool floating, int64_t numel, int64_t* positions, int64_t* num_selected, cudaStream_t stream);

// The row-major shape of nonzero's input (not merged: each dim gives one output column).
struct RowMajorShape {
  int ndim = 0;
  int64_t sizes[kMaxDims];
};
// nonzero: out[k * ndim + d] = coordinate d of positions[k] in `shape`, for k in [0, count).
void launch_nonzero_coordinates(const int64_t* positions, int64_t count, const RowMajorShape& shape, int64_t* out,
                                cudaStream_t stream);

// masked_select: *count = the number of true elements among mask[i * mask_stride], i in [0, numel)
// (self and the mask broadcast to one shape).
void masked_select_count(void* temp, size_t& temp_bytes, const uint8_t* mask, int64_t mask_stride, int64_t numel,
                         int64_t* count, cudaStream_t stream);
// masked_select: out[0..count) = self[i * self_stride] for the i, in order, whose mask element is true.
void masked_select_values(void* temp, size_t& temp_bytes, const void* self, int64_t self_stride, size_t element_size,
                          const uint8_t* mask, int64_t mask_stride, int64_t numel, void* out, int64_t* num_selected,
                          cudaStream_t stream);

}  // namespace anatomy::cuda

// ---- one_hot -----------------------------------------------------------------------------------
// Launchers of one_hot (one_hot.cu), called by one_hot_cuda.cpp.

namespace anatomy::cuda {

// The values are one strided run (strided_run.h): value i is in[i * stride].
//
// min_max[0], min_max[1] = the least and the greatest of the numel (> 0) values, in one CUB
// reduction. Like CUB's entry points: with temp == nullptr it only writes the bytes of temporary
// storage it needs into temp_bytes.
void one_hot_min_max(void* temp, size_t& temp_bytes, const int64_t* in, int64_t stride, int64_t numel, int64_t* min_max,
                     cudaStream_t stream);

// out (contiguous [numel, num_classes]) = 1 where the class is value i, else 0, every
// element written once. A value outside [0, num_classes) is reported through `sink`
// (IndexErrorKind::ClassOutOfRange) and its row stays all zeros; with num_classes 0 the output
// is empty and the first value is reported.
void launch_one_hot(const int64_t* in, int64_t stride, int64_t numel, int64_t num_classes, int64_t* out,
                    const IndexErrorSink& sink, cudaStream_t stream);

}  // namespace anatomy::cuda
