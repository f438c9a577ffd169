// Internal to index/: included by the room's own files only (its launcher header is launch.h).
// The host half of the CUDA indexing ops, shared by index_cuda.cpp (reading) and scatter_cuda.cpp
// (writing): building the offsets table of an op's indices on the device (checked there: Note
// [Bad indices on the device]) and launching the gather and scatter kernels of index/launch.h over a
// walk given as sizes and three stride lists, as the CPU's gather_elements and scatter_elements
// take them (backends/cpu/index_utils.h).
#pragma once

#include <vector>

#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/core/tensor.h"
#include "anatomy/dispatch/ops/indexing_rules.h"

namespace anatomy::cuda {

// The device index of a CUDA tensor (a from_blob tensor may say just "cuda": the current one).
int tensor_device_index(const Tensor& t);

// DeviceError naming op unless t is a CUDA tensor on self's device.
void check_same_device(const Tensor& self, const Tensor& t, const char* what, const char* op);

// Advanced indexing's entries on self's device: CPU ones are copied there (as PyTorch allows),
// another device's raise DeviceError.
std::vector<Tensor> index_entries_on_device(const Tensor& self, TensorList indices, const char* op);

// The table of one index tensor (any strides, int64 or int32), row-major over its shape:
// checked(index) * stride, the value checked against `size` and reported with `dim`.
Tensor index_offsets(const Tensor& index, int64_t size, int64_t dim, int64_t stride, bool allow_negative,
                     const IndexErrorSink& sink);

// take: each index is a row-major position in self (negative ones wrap), turned into self's
// strided offset.
Tensor flat_index_offsets(const Tensor& self, const Tensor& index, const IndexErrorSink& sink);

// Advanced indexing: the sum over the indexed dims d of checked(entries[d]) * self.stride(d),
// row-major over the broadcast index shape; the dims are checked in order, as on the CPU.
Tensor advanced_index_offsets(const Tensor& self, const std::vector<Tensor>& entries, const AdvancedIndexShape& plan,
                              const IndexErrorSink& sink);

// out[p] = src[src_base(p) + table[offset_pos(p)]] over `sizes`.
void gather_by_table(IntArrayRef sizes, const Tensor& out, IntArrayRef out_strides, const Tensor& src,
                     IntArrayRef src_strides, const Tensor& table, IntArrayRef table_strides, const char* op);

// dst[dst_base(p) + table[offset_pos(p)]] = combine(that element, src[p]) over `sizes` (mode:
// dispatch/ops/scatter_functors.h), in the CPU's order for every element of dst (Note
// [Deterministic scatter on CUDA], index_scatter.cu; a walk with few non-colliding positions
// sorts by target instead, Note [Sorted scatter on CUDA], index_scatter_sorted.cu); does
// nothing when the sink's call flag is set.
void scatter_by_table(IntArrayRef sizes, const Tensor& dst, IntArrayRef dst_strides, const Tensor& src,
                      IntArrayRef src_strides, const Tensor& table, IntArrayRef table_strides, ScatterMode mode,
                      const IndexErrorSink& sink, const char* op);

}  // namespace anatomy::cuda
