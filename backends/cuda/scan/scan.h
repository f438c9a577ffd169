// Launcher of the cumsum and cumprod kernels (scan.cu), called by scan_cuda.cpp.
//
// A scan walks rows: the elements along the scanned dim, `length` of them, `in_stride` and
// `out_stride` apart. `rows` holds the other dims (the input's strides, then the output's), so
// row r starts at offsets(r); `num_rows` is their product. The input already has the result
// dtype (as on the CPU, it is cast first).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "anatomy/backends/cuda/common/strided_layout.h"
#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

struct ScanRows {
  StridedLayout<2> rows;
  int64_t num_rows = 0;
  int64_t length = 0;
  int64_t in_stride = 0;
  int64_t out_stride = 0;
};

// `innermost`: the rows are contiguous in the output (out_stride 1), so a warp or a block scans
// each row; otherwise neighbouring rows are neighbours in memory and one thread walks each row.
// A few long rows are cut into tiles scanned in parallel (Note [Tiled scans] in scan.cu), which
// needs scratch memory: scan_scratch_bytes says how much (0: none), and launch_scan gets it.
size_t scan_scratch_bytes(DType dtype, const ScanRows& rows, bool innermost);

// Inclusive sums (prod = false) or products of each row, in the CPU's accumulation types.
// Returns false for a dtype it does not take.
bool launch_scan(bool prod, DType dtype, const void* in, void* out, const ScanRows& rows, bool innermost, void* scratch,
                 cudaStream_t stream);

}  // namespace anatomy::cuda
